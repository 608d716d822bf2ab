/// The Lua scripts that make each queue step atomic on the Redis server. Every key a script
/// touches carries the shard's hash tag (`{s}`), so on a cluster they all live in one slot.
enum RedisStreamScripts {
    /// Settles a batch: records outcomes (once per guard), parks delayed entries, and
    /// acknowledges every entry, all in one atomic step. KEYS: stream, outcomes, unregistered,
    /// delayed set. ARGV: group, worker, ttl, delayed-hash prefix, then per settlement:
    ///   's' guard entry <the values of OutcomeRecord.sentShape but v, entry and worker>
    ///   'o' guard entry nOutcome nUnregistered <outcome fields> <unregistered fields>
    ///   'a' guard entry
    ///   'd' guard entry nFields due <entry fields>
    /// An outcome is written only if its guard (set by the claim to the entry's id) was not
    /// already turned into `<entry>!` — by another worker that held the entry too (a reclaim from
    /// a slow worker), by an earlier run of this call whose reply was lost, or by a life of the
    /// entry before the group was rewound — and the guard becomes `<entry>!` here. An outcome
    /// whose guard names another entry belongs to a duplicate entry: it is recorded once under a
    /// guard of its own (`<guard>#<entry>`). Returns {recorded, skipped, delayed}.
    static let settle = RedisScript(settleScript(setup: "local outcomes = KEYS[2]", records: """
      if kind == 's' then
        next = i + \(OutcomeRecord.sentShapeValueCount + 3)
        local marked = fresh(guard, entry)
        if marked then
          write(marked, guard, entry, 'XADD', outcomes, '*', \(sentShapeArguments(first: 3)))
          recorded = recorded + 1
        else skipped = skipped + 1 end
      elseif kind == 'o' then
        local n1, n2 = tonumber(ARGV[i+3]), tonumber(ARGV[i+4])
        local f = i + 5
        next = f + n1 + n2
        local marked = fresh(guard, entry)
        if marked then
          if n2 > 0 then write(marked, guard, entry, 'XADD', KEYS[3], '*', unpack(ARGV, f + n1, f + n1 + n2 - 1)) end
          write(marked, guard, entry, 'XADD', outcomes, '*', unpack(ARGV, f, f + n1 - 1))
          recorded = recorded + 1
        else skipped = skipped + 1 end
    """, finish: ""))

    /// The settle script of outcome format 2 (`OutcomeRecord.json`): the same guards, delays and
    /// acknowledgement as `settle`, but the outcomes recorded go to one stream entry for the
    /// whole call — `v` 2, `worker`, `count` and `outcomes` (a JSON array of the objects). KEYS
    /// and the first four ARGV as `settle`; then per settlement:
    ///   'j' guard entry json nUnregistered <unregistered fields>
    ///   'a' guard entry
    ///   'd' guard entry nFields due <entry fields>
    /// Returns {recorded, skipped, delayed}.
    /// The outcomes' one write comes last, so if it fails every mark of this call is taken back
    /// and nothing is acknowledged: the whole chunk is recorded when it is sent again (a 410's
    /// unregistered record, written before, may then be written twice).
    static let settleBatched = RedisScript(settleScript(setup: "local objects, marks = {}, {}", records: """
      if kind == 'j' then
        local n = tonumber(ARGV[i+4])
        next = i + 5 + n
        local marked = fresh(guard, entry)
        if marked then
          if n > 0 then write(marked, guard, entry, 'XADD', KEYS[3], '*', unpack(ARGV, i + 5, i + 4 + n)) end
          objects[#objects+1] = ARGV[i+3]
          marks[#marks+1] = {marked, guard, entry}
          recorded = recorded + 1
        else skipped = skipped + 1 end
    """, finish: """
    if #objects > 0 then
      local written, e = pcall(redis.call, 'XADD', KEYS[2], '*', 'v', '2', 'worker', worker, 'count', #objects,
                               'outcomes', '[' .. table.concat(objects, ',') .. ']')
      if not written then
        for _, m in ipairs(marks) do unmark(m[1], m[2], m[3]) end
        acks = {}
        ok, failure = false, e
      end
    end
    """))

    /// A settle script: `prologue`, then `setup`, then the loop over the settlements — the
    /// `records` branches (an `if kind == ...` chain, left open), the 'd' branch, every entry
    /// acknowledged — then `finish` and the XACK.
    ///
    /// Redis does not undo a script's writes when a command in it fails (a key of the wrong
    /// type, memory), so a failure must not leave a guard marked without its outcome: the loop
    /// runs under `pcall`, a failed outcome write undoes its own guard (`write`), and what the
    /// settlements before the failure recorded is still finished and acknowledged. The script
    /// then fails; the worker sends the chunk again, and the settlements done are skipped by
    /// their guards.
    private static func settleScript(setup: String, records: String, finish: String) -> String {
        """
        \(prologue)
        \(setup)
        local ok, failure = pcall(function()
          while i <= #ARGV do
            local kind, guard, entry = ARGV[i], ARGV[i+1], ARGV[i+2]
            local next = i + 3
            \(records)
            \(delayBranch)
            end
            acks[#acks+1] = entry
            i = next
          end
        end)
        \(finish)
        \(acknowledge)
        """
    }

    /// The settle scripts' common start: their arguments, counters, `fresh` — one `SET ... GET`
    /// in the common case (the guard is ours); a duplicate's write is undone; it returns the key
    /// it marked, or false — and `write`, an outcome's write that, when it fails, takes the mark
    /// back (`unmark`: the guard to the entry the claim named, a duplicate's own guard deleted)
    /// before failing the loop, so the settlement is recorded when it is sent again.
    private static let prologue = """
    local group, worker, ttl, hprefix = ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[4]
    local i, recorded, skipped, delayed = 5, 0, 0, 0
    local acks = {}
    local function fresh(guard, entry)
      local done = entry .. '!'
      local g = redis.call('SET', guard, done, 'GET', 'EX', ttl)
      if g == done then return false end
      if not g or g == entry then return guard end
      redis.call('SET', guard, g, 'KEEPTTL')
      local own = guard .. '#' .. entry
      if redis.call('SET', own, '1', 'NX', 'EX', ttl) then return own end
      return false
    end
    local function unmark(marked, guard, entry)
      if marked == guard then redis.call('SET', guard, entry, 'KEEPTTL') else redis.call('DEL', marked) end
    end
    local function write(marked, guard, entry, ...)
      local done, e = pcall(redis.call, ...)
      if done then return end
      unmark(marked, guard, entry)
      error(e)
    end
    """

    /// The settle scripts' 'd' settlement: n fields follow the due time; the entry comes back
    /// from the hash when due.
    private static let delayBranch = """
    elseif kind == 'd' then
        local n = tonumber(ARGV[i+3])
        next = i + 5 + n
        redis.call('DEL', hprefix .. entry)
        redis.call('HSET', hprefix .. entry, unpack(ARGV, i + 5, i + 4 + n))
        redis.call('ZADD', KEYS[4], ARGV[i+4], entry)
        delayed = delayed + 1
    """

    /// The settle scripts' end: every settled entry acknowledged in one XACK; then the loop's
    /// failure, if it had one, as the script's error.
    private static let acknowledge = """
    if #acks > 0 then redis.call('XACK', KEYS[1], group, unpack(acks)) end
    if not ok then
      if type(failure) == 'table' and failure.err then return redis.error_reply(failure.err) end
      return redis.error_reply(tostring(failure))
    end
    return {recorded, skipped, delayed}
    """

    /// The XADD arguments of a sent-shape outcome (`OutcomeRecord.sentShape`): the field names
    /// as Lua constants, `v` and `worker` filled in here, `entry` from the settlement, the rest
    /// from ARGV in table order starting at `ARGV[i + first]`.
    static func sentShapeArguments(first: Int) -> String {
        var next = first
        return OutcomeRecord.sentShape.map { name -> String in
            let value: String
            switch name {
            case "v": value = "'1'"
            case "worker": value = "worker"
            case "entry": value = "entry"
            default:
                value = "ARGV[i+\(next)]"
                next += 1
            }
            return "'\(name)', \(value)"
        }.joined(separator: ", ")
    }

    /// Moves due delayed entries back into the stream (new entry ids, same notification ids:
    /// their guards are handed to the new entries). KEYS: stream, delayed set. ARGV: now (ms),
    /// limit, delayed-hash prefix, guard prefix. Returns how many moved.
    static let promote = RedisScript("""
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
    """)

    /// Takes back entries pending with this consumer (a previous life's, or read just before a
    /// lost connection) without counting a delivery: each one still ours gets its idle time reset
    /// (`XCLAIM ... JUSTID`, which leaves the counter alone, so no other worker reclaims it while
    /// it is held) and is returned with its fields and its count; an entry deleted from the stream
    /// is returned without fields (nil: it gets an outcome, as an entry without an id), and one no
    /// longer ours is left out. KEYS: stream. ARGV: group, consumer, entry ids. Returns
    /// {{id, fields, deliveries}, ...}.
    static let takeOwn = RedisScript("""
    local out = {}
    for i = 3, #ARGV do
      local id = ARGV[i]
      local p = redis.call('XPENDING', KEYS[1], ARGV[1], id, id, 1, ARGV[2])[1]
      if p then
        local e = redis.call('XRANGE', KEYS[1], id, id)[1]
        if e then
          redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0, id, 'JUSTID')
          out[#out+1] = {id, e[2], p[4]}
        else
          out[#out+1] = {id, false, p[4]}
        end
      end
    end
    return out
    """)

    /// Takes over entries of *other* consumers idle longer than min-idle (a dead or stuck
    /// worker's), without counting a delivery (`countDelivery` does, when one is sent): this
    /// consumer's own entries are never taken (a slow one of ours is still held; a previous
    /// life's are re-read at start), so a reclaim never raises the count of an entry this worker
    /// holds. An entry deleted from the stream is returned without fields, unclaimed (XCLAIM
    /// would drop it from the pending list without an outcome; the settle's XACK removes it).
    /// KEYS: stream. ARGV: group, consumer, min-idle ms, cursor (an XPENDING start: "-" or
    /// "(<id>"), count. Returns {next cursor ("-" after the last page), {{id, fields,
    /// deliveries}, ...}}.
    static let reclaim = RedisScript("""
    local rows = redis.call('XPENDING', KEYS[1], ARGV[1], 'IDLE', tonumber(ARGV[3]), ARGV[4], '+', tonumber(ARGV[5]))
    local out = {}
    for _, p in ipairs(rows) do
      if p[2] ~= ARGV[2] then
        local e = redis.call('XRANGE', KEYS[1], p[1], p[1])[1]
        if e then
          redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], tonumber(ARGV[3]), p[1], 'JUSTID')
          out[#out+1] = {p[1], e[2], p[4]}
        else
          out[#out+1] = {p[1], false, p[4]}
        end
      end
    end
    local nextCursor = '-'
    if #rows == tonumber(ARGV[5]) and #rows > 0 then nextCursor = '(' .. rows[#rows][1] end
    return {nextCursor, out}
    """)

    /// Counts a delivery of entries about to be sent again (re-delivered: their previous
    /// holder ended without an outcome): each one still pending with this consumer gets its
    /// delivery counter raised by one (`XCLAIM ... RETRYCOUNT n+1 JUSTID`, which also resets its
    /// idle time). KEYS: stream. ARGV: group, consumer, entry ids. Returns the new counts, in
    /// order; 0 for an entry no longer this consumer's.
    static let countDelivery = RedisScript("""
    local out = {}
    for i = 3, #ARGV do
      local p = redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[i], ARGV[i], 1, ARGV[2])[1]
      if p then
        local n = p[4] + 1
        redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0, ARGV[i], 'RETRYCOUNT', n, 'JUSTID')
        out[#out+1] = n
      else
        out[#out+1] = 0
      end
    end
    return out
    """)
}
