/// The Lua scripts of campaign control (docs/worker.md, "Steering a campaign"). Every key
/// carries the shard's hash tag, so on a cluster each script runs in the shard's one slot.
enum RedisCampaignScripts {
    /// Reads every control of the shard at once: the names in `campaigns:{s}`, and each one's
    /// `campaign:{s}:<name>` hash. KEYS: the set. ARGV: the hashes' prefix. Returns {name,
    /// {field, value, ...}, name, ...}.
    static let controls = RedisScript("""
    local names = redis.call('SMEMBERS', KEYS[1])
    local out = {}
    for _, n in ipairs(names) do
      out[#out+1] = n
      out[#out+1] = redis.call('HGETALL', ARGV[1] .. n)
    end
    return out
    """)

    /// Moves entries of paused campaigns aside, each in one step: its fields (with `origin`
    /// naming the entry its ids' guards name, as for an entry back from the delayed set, and
    /// `_paused` its notification count) go to `paused:{s}:<campaign>`, and the entry is
    /// acknowledged and deleted from the stream, so that a kill at any point leaves it in one
    /// place only. Checked in Redis, not in the worker's copy of the controls: the campaign must
    /// still be paused (a resume that came first moves nothing back later), the entry still this
    /// consumer's, and not partly settled (its progress is kept under its stream id: it is
    /// finished where it is). KEYS: stream, progress hash, written hash, stats hash. ARGV: group,
    /// consumer, control-hash prefix, paused-stream prefix, then per entry: id, campaign, count.
    /// Returns per entry 1 (parked), 0 (take it in), -1 (no longer ours).
    static let park = RedisScript("""
    local out = {}
    for i = 5, #ARGV, 3 do
      local id, c, n = ARGV[i], ARGV[i+1], ARGV[i+2]
      local r = 0
      local p = redis.call('XPENDING', KEYS[1], ARGV[1], id, id, 1)
      if #p == 0 or p[1][2] ~= ARGV[2] then
        r = -1
      elseif redis.call('HGET', ARGV[3] .. c, 'state') == 'paused' and redis.call('HEXISTS', KEYS[2], id) == 0 then
        local e = redis.call('XRANGE', KEYS[1], id, id)
        if #e > 0 then
          local f = e[1][2]
          local has = false
          for k = 1, #f, 2 do if f[k] == 'origin' then has = true end end
          if not has then f[#f+1] = 'origin' f[#f+1] = id end
          f[#f+1] = '_paused'
          f[#f+1] = n
          redis.call('XADD', ARGV[4] .. c, '*', unpack(f))
          redis.call('XACK', KEYS[1], ARGV[1], id)
          redis.call('XDEL', KEYS[1], id)
          redis.call('HDEL', KEYS[3], id)
          redis.call('HINCRBY', KEYS[4], 'campaign:' .. c .. ':paused', tonumber(n))
          r = 1
        end
      end
      out[#out+1] = r
    end
    return out
    """)

    /// Moves up to ARGV[1] entries of a campaign's paused stream back into the shard's stream
    /// (a resume, or a cancel: the workers then cancel them), each in one step with its removal
    /// from the paused stream, its `_paused` count taken off `campaign:<c>:paused`. Refuses
    /// while the campaign is paused (a pause that came after this resume). KEYS: stream, paused
    /// stream, stats hash, control hash (an emptied paused stream is deleted). ARGV: max,
    /// campaign. Returns {entries moved (-1:
    /// refused), notifications moved}.
    static let moveBack = RedisScript("""
    if redis.call('HGET', KEYS[4], 'state') == 'paused' then return {-1, 0} end
    local es = redis.call('XRANGE', KEYS[2], '-', '+', 'COUNT', tonumber(ARGV[1]))
    local n = 0
    for _, e in ipairs(es) do
      local f, out = e[2], {}
      for k = 1, #f, 2 do
        if f[k] == '_paused' then n = n + tonumber(f[k+1]) else out[#out+1] = f[k] out[#out+1] = f[k+1] end
      end
      redis.call('XADD', KEYS[1], '*', unpack(out))
      redis.call('XDEL', KEYS[2], e[1])
    end
    if n > 0 then redis.call('HINCRBY', KEYS[3], 'campaign:' .. ARGV[2] .. ':paused', -n) end
    if redis.call('XLEN', KEYS[2]) == 0 then redis.call('DEL', KEYS[2]) end
    return {#es, n}
    """)
}
