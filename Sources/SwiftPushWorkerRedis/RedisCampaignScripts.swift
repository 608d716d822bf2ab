import SwiftPushKeys

/// The Lua scripts of campaign control (docs/worker.md, "Steering a campaign"). Every key
/// carries the shard's hash tag, so on a cluster each script runs in the shard's one slot.
enum RedisCampaignScripts {
    /// Reads every control of the shard at once (`CampaignControl.readAllScript`, which the
    /// status runs too).
    static let controls = RedisScript(CampaignControl.readAllScript)

    /// Moves entries of paused campaigns aside, each in one step: its fields (with `origin`
    /// naming the entry its ids' guards name, as for an entry back from the delayed set, and
    /// `_paused` its notification count) go to `paused:{s}:<campaign>`, and the entry is
    /// acknowledged and deleted from the stream, so that a kill at any point leaves it in one
    /// place only. Checked in Redis, not in the worker's copy of the controls: the campaign must
    /// still be paused (a resume that came first moves nothing back later), the entry still this
    /// consumer's, and not partly settled (its progress is kept under its stream id: it is
    /// finished where it is). An entry with a due time goes to the delayed set instead (member
    /// `<entry id>:t`, its fields in the hash `delayed:{s}:<member>`, as a 429's: the promotion
    /// adds it back when due), if its campaign is still throttled: what a worker holding enough
    /// of a throttled campaign does not take in. KEYS: stream, progress hash, written hash, stats
    /// hash, delayed set. ARGV: group, consumer, control-hash prefix, paused-stream prefix,
    /// delayed-hash prefix, then per entry: id, campaign, count, due time (ms; "" to pause).
    /// Returns per entry 1 (parked), 0 (take it in), -1 (no longer ours).
    static let park = RedisScript("""
    local out = {}
    for i = 6, #ARGV, 4 do
      local id, c, n, due = ARGV[i], ARGV[i+1], ARGV[i+2], ARGV[i+3]
      local r = 0
      local p = redis.call('XPENDING', KEYS[1], ARGV[1], id, id, 1)
      local wanted = false
      if due == '' then
        wanted = redis.call('HGET', ARGV[3] .. c, 'state') == 'paused'
      else
        wanted = redis.call('HEXISTS', ARGV[3] .. c, 'rate') == 1
      end
      if #p == 0 or p[1][2] ~= ARGV[2] then
        r = -1
      elseif wanted and redis.call('HEXISTS', KEYS[2], id) == 0 then
        local e = redis.call('XRANGE', KEYS[1], id, id)
        if #e > 0 then
          local f = e[1][2]
          local has = false
          for k = 1, #f, 2 do if f[k] == 'origin' then has = true end end
          if not has then f[#f+1] = 'origin' f[#f+1] = id end
          if due == '' then
            f[#f+1] = '_paused'
            f[#f+1] = n
            redis.call('XADD', ARGV[4] .. c, '*', unpack(f))
            redis.call('HINCRBY', KEYS[4], 'campaign:' .. c .. ':paused', tonumber(n))
          else
            local m = id .. ':t'
            redis.call('DEL', ARGV[5] .. m)
            redis.call('HSET', ARGV[5] .. m, unpack(f))
            redis.call('ZADD', KEYS[5], tonumber(due), m)
          end
          redis.call('XACK', KEYS[1], ARGV[1], id)
          redis.call('XDEL', KEYS[1], id)
          redis.call('HDEL', KEYS[3], id)
          r = 1
        end
      end
      out[#out+1] = r
    end
    return out
    """)

    /// Takes up to ARGV[1] notifications' worth from a throttled campaign's token bucket, shared
    /// by every worker of the shard: the bucket fills at the control's `rate` per second of
    /// Redis's clock (`TIME`, one clock for the fleet) up to a tenth of a second's worth (so
    /// that over any window the fleet sends at most the rate plus that), and what is taken is
    /// what may be sent now. No rate (the throttle was lifted): all of it. KEYS: control hash,
    /// bucket hash (`tokens`, `at_us`; expires after a minute unused). Returns the count granted.
    static let budget = RedisScript("""
    local want = tonumber(ARGV[1])
    local rate = tonumber(redis.call('HGET', KEYS[1], 'rate'))
    if not rate or rate <= 0 then return want end
    local t = redis.call('TIME')
    local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
    local burst = math.max(1, rate / 10)
    local b = redis.call('HMGET', KEYS[2], 'tokens', 'at_us')
    local tokens, at = tonumber(b[1]), tonumber(b[2])
    if not tokens or not at then tokens, at = burst, now end
    tokens = math.min(burst, tokens + math.max(0, now - at) * rate / 1000000)
    local grant = math.max(0, math.min(want, math.floor(tokens)))
    tokens = tokens - grant
    redis.call('HSET', KEYS[2], 'tokens', tostring(tokens), 'at_us', tostring(now))
    redis.call('PEXPIRE', KEYS[2], 60000)
    return grant
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
