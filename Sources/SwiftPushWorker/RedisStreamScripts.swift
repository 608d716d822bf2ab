/// The Lua scripts that make each queue step atomic on the Redis server. Every key a script
/// touches carries the shard's hash tag (`{s}`), so on a cluster they all live in one slot.
enum RedisStreamScripts {
    /// Claims notification ids for a batch of entries. ARGV: ttl, then (guard key, entry id)
    /// pairs. A guard holds the owning entry's id while it is being sent and `<entry>!` once its
    /// outcome is recorded. Returns per entry: 0 send, 1 already recorded, or the id of the
    /// entry that owns the notification id (a duplicate).
    /// `SET ... NX GET` (Redis 7.0) sets and reads the old value in one command.
    static let claim = """
    local r = {}
    for i = 2, #ARGV, 2 do
      local g = redis.call('SET', ARGV[i], ARGV[i+1], 'NX', 'GET', 'EX', ARGV[1])
      if not g or g == ARGV[i+1] then r[#r+1] = 0
      elseif g == ARGV[i+1] .. '!' then r[#r+1] = 1
      else r[#r+1] = g end
    end
    return r
    """

    /// Settles a batch: records outcomes (once per guard), parks delayed entries, and
    /// acknowledges every entry, all in one atomic step. KEYS: stream, outcomes, unregistered,
    /// delayed set. ARGV: group, ttl, delayed-hash prefix, then per settlement:
    ///   'o' guard entry nOutcome nUnregistered <outcome fields> <unregistered fields>
    ///   'a' guard entry 0 0
    ///   'd' guard entry nFields due <entry fields>
    /// An outcome whose guard names another entry belongs to a duplicate entry: it is recorded
    /// once under a guard of its own (`<guard>#<entry>`). Returns {recorded, skipped, delayed}.
    static let settle = """
    local group, ttl, hprefix = ARGV[1], tonumber(ARGV[2]), ARGV[3]
    local i, recorded, skipped, delayed = 4, 0, 0, 0
    local acks = {}
    while i <= #ARGV do
      local kind, guard, entry = ARGV[i], ARGV[i+1], ARGV[i+2]
      local n1, n2 = tonumber(ARGV[i+3]), tonumber(ARGV[i+4])
      local f = i + 5
      if kind == 'o' then
        -- One SET ... GET in the common case (the guard is ours); a duplicate's write is undone.
        local g = redis.call('SET', guard, entry .. '!', 'GET', 'EX', ttl)
        local fresh = false
        if g == entry .. '!' then fresh = false
        elseif not g or g == entry then fresh = true
        else
          redis.call('SET', guard, g, 'KEEPTTL')
          fresh = redis.call('SET', guard .. '#' .. entry, '1', 'NX', 'EX', ttl) ~= false
        end
        if fresh then
          redis.call('XADD', KEYS[2], '*', unpack(ARGV, f, f + n1 - 1))
          if n2 > 0 then redis.call('XADD', KEYS[3], '*', unpack(ARGV, f + n1, f + n1 + n2 - 1)) end
          recorded = recorded + 1
        else
          skipped = skipped + 1
        end
        i = f + n1 + n2
      elseif kind == 'd' then
        -- n1 fields follow the due time (n2): the entry comes back from the hash when due.
        redis.call('DEL', hprefix .. entry)
        redis.call('HSET', hprefix .. entry, unpack(ARGV, f, f + n1 - 1))
        redis.call('ZADD', KEYS[4], n2, entry)
        delayed = delayed + 1
        i = f + n1
      else
        i = f
      end
      acks[#acks+1] = entry
    end
    if #acks > 0 then redis.call('XACK', KEYS[1], group, unpack(acks)) end
    return {recorded, skipped, delayed}
    """

    /// Moves due delayed entries back into the stream (new entry ids, same notification ids:
    /// their guards are handed to the new entries). KEYS: stream, delayed set. ARGV: now (ms),
    /// limit, delayed-hash prefix, guard prefix. Returns how many moved.
    static let promote = """
    local due = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
    for _, m in ipairs(due) do
      local h = ARGV[3] .. m
      local f = redis.call('HGETALL', h)
      if #f > 0 then
        local newid = redis.call('XADD', KEYS[1], '*', unpack(f))
        local id = redis.call('HGET', h, 'id')
        if id then redis.call('SET', ARGV[4] .. 'id:' .. id, newid, 'KEEPTTL') end
        redis.call('DEL', h)
      end
      redis.call('ZREM', KEYS[2], m)
    end
    return #due
    """

    /// XAUTOCLAIM plus each claimed entry's delivery count (XPENDING), in one step. KEYS:
    /// stream. ARGV: group, consumer, min-idle ms, cursor, count. Returns
    /// {next cursor, {{id, fields, deliveries}, ...}}.
    static let reclaim = """
    local r = redis.call('XAUTOCLAIM', KEYS[1], ARGV[1], ARGV[2], ARGV[3], ARGV[4], 'COUNT', ARGV[5])
    local out = {}
    for _, e in ipairs(r[2]) do
      local p = redis.call('XPENDING', KEYS[1], ARGV[1], e[1], e[1], 1)
      local n = 1
      if p[1] then n = p[1][4] end
      out[#out+1] = {e[1], e[2], n}
    end
    return {r[1], out}
    """
}
