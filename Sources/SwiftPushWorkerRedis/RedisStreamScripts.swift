/// The Lua scripts that make each queue step atomic on the Redis server (docs/worker.md, "The
/// protocol"). Every key a script touches carries the shard's hash tag (`{s}`), so on a cluster
/// they all live in one slot. `InMemoryWorkQueue` implements the same steps in Swift for the
/// machine's unit tests, and `WorkQueueContractTests` runs one set of scenarios against both.
enum RedisStreamScripts {
    /// Claims the notification ids of a read batch: per id, its guard in the time-bucketed guard
    /// hashes, written once (`HSETNX`) with the entry that owns the id and the claim's time
    /// (`<entry> <unix seconds>`). A guard that names the entry (or the entry it came from,
    /// `origin`, for an entry back from the delayed set) is a re-delivery: fine. One that names
    /// another entry and is younger than the TTL makes the id a duplicate. The current bucket
    /// is `floor(now / ttl)`; the previous one is read too (a guard there older than the TTL is
    /// forgotten), so a guard lives exactly the TTL; each bucket expires when it can hold no
    /// live guard. Also returns each entry's progress (which of its notifications have
    /// outcomes already) when asked.
    ///
    /// KEYS: progress hash. ARGV: guard-hash prefix, ttl (s), then per entry: entry id, origin
    /// ("" for none), "1" to read its progress, n, and its n ids; or, when every entry of the
    /// batch has one id, no origin and no progress to read (a fresh read of single or multicast
    /// entries: the common case), "s" and then (entry id, id) pairs. Returns the entries with
    /// something to say, in order: {{entry number (from 1), progress or false, id number,
    /// owner, id number, owner, ...}, ...}.
    static let claim = RedisScript("""
    local prefix, ttl = ARGV[1], tonumber(ARGV[2])
    local now = tonumber(redis.call('TIME')[1])
    local b = math.floor(now / ttl)
    local cur, prev = prefix .. b, prefix .. (b - 1)
    local hasPrev = redis.call('EXISTS', prev) == 1
    local stamp = ' ' .. now
    -- Every id to claim and its entry's number; per entry, its id, the entry its guards name
    -- (the entry or its origin), that guard's value, and where its ids start.
    local ids, es = {}, {}
    local entryOf, mineOf, valueOf, firstOf = {}, {}, {}, {}
    local progress = {}
    if ARGV[3] == 's' then
      local e = 0
      for i = 4, #ARGV, 2 do
        e = e + 1
        ids[e], es[e] = ARGV[i+1], e
        entryOf[e], mineOf[e], valueOf[e], firstOf[e] = ARGV[i], ARGV[i], ARGV[i] .. stamp, e
      end
    else
      local i, e = 3, 0
      while i <= #ARGV do
        e = e + 1
        local entry, origin, n = ARGV[i], ARGV[i+1], tonumber(ARGV[i+3])
        local mine = entry
        if origin ~= '' then mine = origin end
        entryOf[e], mineOf[e], valueOf[e], firstOf[e] = entry, mine, mine .. stamp, #ids + 1
        for k = 1, n do
          local j = #ids + 1
          ids[j], es[j] = ARGV[i + 3 + k], e
        end
        if ARGV[i+2] == '1' then progress[#progress+1] = e end
        i = i + 4 + n
      end
    end
    -- The guards as they stand, read a slice at a time (HMGET, not a call per id: with a
    -- thousand ids a claim, the calls were most of its time), then the missing ones written.
    local function values(key)
      local out = {}
      for first = 1, #ids, 1000 do
        local got = redis.call('HMGET', key, unpack(ids, first, math.min(first + 999, #ids)))
        for k = 1, #got do out[first + k - 1] = got[k] end
      end
      return out
    end
    local old = false
    if hasPrev then old = values(prev) end
    local held = values(cur)
    local taken, sets = {}, {}
    local answers, order = {}, {}
    for j = 1, #ids do
      local id, e, owner = ids[j], es[j], nil
      if old then
        local g = old[j]
        if g then
          local o, at = string.match(g, '^(%S+) (%d+)$')
          if o and now - tonumber(at) < ttl then owner = o end
        end
      end
      if not owner then
        -- An id claimed earlier in this same call is held by that entry.
        local g = taken[id] or held[j]
        if g then
          owner = string.match(g, '^(%S+)')
        else
          local v = valueOf[e]
          taken[id] = v
          sets[#sets+1] = id
          sets[#sets+1] = v
        end
      end
      if owner and owner ~= mineOf[e] and owner ~= entryOf[e] then
        local a = answers[e]
        if not a then a = {e, false} answers[e] = a order[#order+1] = e end
        a[#a+1] = j - firstOf[e] + 1
        a[#a+1] = owner
      end
    end
    for first = 1, #sets, 2000 do redis.call('HSET', cur, unpack(sets, first, math.min(first + 1999, #sets))) end
    if #sets > 0 then redis.call('EXPIREAT', cur, (b + 2) * ttl) end
    for _, e in ipairs(progress) do
      local p = redis.call('HGET', KEYS[1], entryOf[e])
      if p then
        local a = answers[e]
        if not a then a = {e, false} answers[e] = a order[#order+1] = e end
        a[2] = p
      end
    end
    table.sort(order)
    local out = {}
    for k, e in ipairs(order) do out[k] = answers[e] end
    return out
    """)

    /// Settles a chunk of entries in one atomic step: for each entry still pending (settled by
    /// nobody else, nor by an earlier run of this call whose reply was lost), the notifications
    /// its settlement covers less those its progress marks done already get their outcomes
    /// recorded — format 1: an `outcomes` entry each; format 2: objects of one `v 2` entry;
    /// records: one object per entry in one `v 3` entry (`OutcomeRecord+Record.swift`) — their
    /// 410s go to the unregistered stream, the ones a 429 parks go to the delayed set as a new
    /// entry, and the entry's progress is updated, or, once every notification of the entry
    /// has its outcome (`final`), the entry is acknowledged, deleted and its progress dropped.
    /// The `stats` counters count what was recorded.
    ///
    /// Redis keeps a script's earlier writes when a later command fails (a key of the wrong
    /// type, memory), so nothing is marked (progress, acknowledgement) before every write its
    /// outcomes need has succeeded: the loop runs under `pcall`, an entry whose writes failed
    /// midway is not marked, and nor is any entry whose record was to go in a batched `XADD`
    /// that failed; the script then fails and the worker sends the chunk again (a 410's record
    /// in the unregistered stream may be written twice).
    ///
    /// A final settlement that would leave a notification of the entry without an outcome (its
    /// own outcomes and the entry's progress together do not cover all `n`: a checkpoint the
    /// entry had is gone, which a failover to a replica that had not received it yet does) is
    /// applied as a checkpoint instead: the entry is not acknowledged, and is returned as
    /// *short*, so that the worker takes it back and sends what has no outcome.
    ///
    /// Two common cases take a shorter way (what they record is the same): a single entry's one
    /// outcome in format 1 (`s`, `RedisSettleArguments`: its values only, the field names are
    /// the script's) is written first and then acknowledged, and `XACK`'s reply says whether
    /// the entry was still pending: when it was not, the writes are deleted again in the same
    /// atomic step (no `XPENDING` per entry); and a record of an entry all accepted and settled
    /// whole with no progress is written from its arguments without the general bookkeeping
    /// (with 500 tokens per entry that bookkeeping, tables and strings per entry, was most of
    /// the script's time).
    ///
    /// KEYS: stream, outcomes, unregistered, delayed set, progress hash, stats hash, fast stream. ARGV:
    /// group, worker, delayed-hash prefix, then per entry (`RedisSettleArguments`) either the
    /// short single form (entry, 's', id, kind letter, status, reason, app, campaign, detail,
    /// apns_id, token, attempts, deliveries, latency_us, timestamp_ms, maybe_delivered) or the
    /// general one: entry, dest ('1', '2' or '3'), n, final ('1'/'0'), app, campaign, record
    /// header, accepted count, accepted bitmap, accepted ranges, accepted ids, repeats, the
    /// number of other outcomes and each (index, kind letter, reason, JSON, nf, nu, nf outcome
    /// fields, nu unregistered fields), the rest (kind letter or '', then reason and JSON), the
    /// number of delayed pieces (then due, member, join field, nf, nf fields, and index + piece
    /// each). Returns {entries marked, entries skipped, {short entries}}.
    static let settle = RedisScript("""
    local group, worker, hprefix = ARGV[1], ARGV[2], ARGV[3]
    -- An entry of the fast lane is named `f<id>` (RedisFastLane.swift): its stream is KEYS[7].
    local function lane(e) if string.byte(e, 1) == 102 then return KEYS[7], string.sub(e, 2) end return KEYS[1], e end
    local band, bor, bnot, rshift = bit.band, bit.bor, bit.bnot, bit.rshift
    local function popcount(x) local c = 0 while x ~= 0 do c = c + band(x, 1) x = rshift(x, 1) end return c end
    local function getbit(m, idx) return band(m[rshift(idx, 3) + 1] or 0, rshift(128, band(idx, 7))) ~= 0 end
    local function setbit(m, idx) local j = rshift(idx, 3) + 1 m[j] = bor(m[j] or 0, rshift(128, band(idx, 7))) end
    local function bytes(s, nb)
      local t = {}
      for j = 1, nb do t[j] = 0 end
      if s then for j = 1, math.min(#s, nb) do t[j] = string.byte(s, j) end end
      return t
    end
    local function ranges(m, n, want)
      local out, start = {}, nil
      for idx = 0, n do
        local on = idx < n and getbit(m, idx) == want
        if on and not start then start = idx
        elseif not on and start then
          if idx - 1 == start then out[#out+1] = tostring(start) else out[#out+1] = start .. '-' .. (idx - 1) end
          start = nil
        end
      end
      return table.concat(out, ',')
    end
    local kinds = {a = 'accepted', r = 'rejected', f = 'failed'}
    local words = {a = 'ACCEPTED', r = 'REJECTED', f = 'FAILED'}
    local inc = {}
    local function add(field, n) inc[field] = (inc[field] or 0) + n end
    local function count(k, reason, n, app, campaign)
      local word = kinds[k]
      add(word, n)
      if reason ~= '' then add('reason:' .. reason, n) end
      if app ~= '' then add('app:' .. app .. ':' .. word, n) end
      if campaign ~= '' then
        add('campaign:' .. campaign .. ':' .. word, n)
        if reason ~= '' then add('campaign:' .. campaign .. ':reason:' .. reason, n) end
      end
    end
    local i, skipped = 4, 0
    local marks, records, objects = {}, {}, {}
    local recordCount = 0
    -- Entries the short single form acknowledged; entries the short record way recorded (marked
    -- once their records' XADD has succeeded).
    local acked, quick = {}, {}

    -- The general way: one entry's settlement at ARGV[i]; returns where the next one starts.
    local function general(i)
        local E, dest, n, final = ARGV[i], ARGV[i+1], tonumber(ARGV[i+2]), ARGV[i+3] == '1'
        local app, campaign, hdr = ARGV[i+4], ARGV[i+5], ARGV[i+6]
        local acc, accmap, accat, accids, repeats = tonumber(ARGV[i+7]), ARGV[i+8], ARGV[i+9], ARGV[i+10], tonumber(ARGV[i+11])
        local o = i + 13
        local others = {}
        for k = 1, tonumber(ARGV[i+12]) do
          local nf, nu = tonumber(ARGV[o+4]), tonumber(ARGV[o+5])
          others[k] = {idx = tonumber(ARGV[o]), kind = ARGV[o+1], reason = ARGV[o+2], json = ARGV[o+3], f = o + 6, nf = nf, u = o + 6 + nf, nu = nu}
          o = o + 6 + nf + nu
        end
        local rest = nil
        if ARGV[o] ~= '' then
          rest = {kind = ARGV[o], reason = ARGV[o+1], json = ARGV[o+2]}
          o = o + 3
        else
          o = o + 1
        end
        local delay = nil
        local nd = tonumber(ARGV[o])
        if nd > 0 then
          local nf = tonumber(ARGV[o+4])
          delay = {due = ARGV[o+1], member = ARGV[o+2], join = ARGV[o+3], f = o + 5, nf = nf, p = o + 5 + nf, np = nd}
          o = o + 5 + nf + 2 * nd
        else
          o = o + 1
        end
        local S, B = lane(E)
        if not redis.call('XPENDING', S, group, B, B, 1)[1] then
          skipped = skipped + 1
          return o
        end
        local p = false
        if n > 1 then p = redis.call('HGET', KEYS[5], E) end
        local nb = math.floor((n + 7) / 8)
        local short = false
        if final and n > 1 and not p and rest == nil then
          local np = 0
          if delay then np = delay.np end
          if acc + #others + np < n then short, final = true, false end
        end
        local need = p or not final or rest ~= nil
        local c = nil
        if need then c = bytes(p or nil, nb) end
        local counts = {}
        local k, at, ids = 0, '', ''
        if acc > 0 then
          if not p then
            k, at, ids = acc, accat, accids
            if need then for j = 1, nb do c[j] = bor(c[j], string.byte(accmap, j) or 0) end end
          else
            local fresh, whole = {}, true
            for j = 1, nb do
              local a = string.byte(accmap, j) or 0
              local f = band(a, bnot(c[j]))
              if f ~= a then whole = false end
              fresh[j] = f
              k = k + popcount(f)
            end
            if whole then
              at, ids = accat, accids
            else
              at = ranges(fresh, n, true)
              if accids ~= '' then
                local kept, bitno, am = {}, -1, bytes(accmap, nb)
                for item in string.gmatch(accids, '[^\\n]+') do
                  repeat bitno = bitno + 1 until getbit(am, bitno)
                  if string.sub(item, -1) == ',' then item = string.sub(item, 1, -2) end
                  if getbit(fresh, bitno) then kept[#kept+1] = item end
                end
                ids = table.concat(kept, ',')
              end
            end
            for j = 1, nb do c[j] = bor(c[j], fresh[j]) end
          end
          if k > 0 then counts[#counts+1] = {'a', '', k} end
        end
        local frags = {}
        for _, ot in ipairs(others) do
          if not (need and getbit(c, ot.idx)) then
            if need then setbit(c, ot.idx) end
            if ot.nu > 0 then redis.call('XADD', KEYS[3], '*', unpack(ARGV, ot.u, ot.u + ot.nu - 1)) end
            if dest == '1' then redis.call('XADD', KEYS[2], '*', unpack(ARGV, ot.f, ot.f + ot.nf - 1)) end
            frags[#frags+1] = ot.json
            counts[#counts+1] = {ot.kind, ot.reason, 1}
          end
        end
        local dcount = 0
        if delay then
          local pieces = {}
          for q = 0, delay.np - 1 do
            local idx = tonumber(ARGV[delay.p + 2 * q])
            if not (need and getbit(c, idx)) then
              if need then setbit(c, idx) end
              pieces[#pieces+1] = ARGV[delay.p + 2 * q + 1]
            end
          end
          dcount = #pieces
          if dcount > 0 then
            local h = hprefix .. delay.member
            redis.call('DEL', h)
            redis.call('HSET', h, unpack(ARGV, delay.f, delay.f + delay.nf - 1))
            if delay.join == 'tokens' then redis.call('HSET', h, 'tokens', table.concat(pieces, ','))
            elseif delay.join == 'notifications' then redis.call('HSET', h, 'notifications', '[' .. table.concat(pieces, ',') .. ']') end
            redis.call('ZADD', KEYS[4], delay.due, delay.member)
          end
        end
        local rc, rat = 0, ''
        if rest then
          for idx = 0, n - 1 do if not getbit(c, idx) then rc = rc + 1 end end
          rat = ranges(c, n, false)
          for idx = 0, n - 1 do setbit(c, idx) end
          if rc > 0 then counts[#counts+1] = {rest.kind, rest.reason, rc} end
        end
        if final and p and rest == nil then
          local got = 0
          for j = 1, nb do got = got + popcount(c[j]) end
          if got < n then short, final = true, false end
        end
        local cnt = k + #frags + rc
        local mark = {E = E, final = final, short = short, hadP = p ~= false, counts = counts, app = app, campaign = campaign}
        if not final then mark.map = string.char(unpack(c)) end
        if dest == '2' then
          for _, f in ipairs(frags) do objects[#objects+1] = f end
          mark.r2 = #frags > 0
        elseif dest == '3' and (cnt > 0 or dcount > 0 or final) then
          local r = hdr .. ',"count":' .. cnt
          if k > 0 then
            r = r .. ',"accepted":' .. k .. ',"accepted_at":"' .. at .. '"'
            if ids ~= '' then r = r .. ',"accepted_ids":[' .. ids .. ']' end
          end
          if #frags > 0 then r = r .. ',"others":[' .. table.concat(frags, ',') .. ']' end
          if rc > 0 then r = r .. ',"rest":{' .. rest.json .. '},"rest_count":' .. rc .. ',"rest_at":"' .. rat .. '"' end
          if dcount > 0 then r = r .. ',"delayed":' .. dcount end
          if final then
            if repeats > 0 then r = r .. ',"repeats":' .. repeats end
            r = r .. ',"final":true'
          end
          records[#records+1] = r .. '}'
          recordCount = recordCount + cnt
          mark.r3 = true
        end
        marks[#marks+1] = mark
        return o
    end

    local ok, failure = pcall(function()
      while i <= #ARGV do
        local E, dest = ARGV[i], ARGV[i+1]
        if dest == 's' then
          -- A single entry's one outcome, format 1: written, then acknowledged; XACK's reply
          -- says whether the entry was still pending, and if it was not the writes go again.
          local id, k, status, reason, app, campaign = ARGV[i+2], ARGV[i+3], ARGV[i+4], ARGV[i+5], ARGV[i+6], ARGV[i+7]
          local detail, apnsID, token = ARGV[i+8], ARGV[i+9], ARGV[i+10]
          local ts, maybe = ARGV[i+14], ARGV[i+15]
          local u = false
          if status == '410' and token ~= '' then
            u = redis.call('XADD', KEYS[3], '*', 'token', token, 'app', app, 'id', id, 'reason', reason, 'timestamp_ms', ts)
          end
          local f = {'v', '1', 'id', id, 'entry', E, 'outcome', words[k], 'status', status, 'reason', reason}
          if app ~= '' then f[#f+1] = 'app' f[#f+1] = app end
          if campaign ~= '' then f[#f+1] = 'campaign' f[#f+1] = campaign end
          if detail ~= '' then f[#f+1] = 'detail' f[#f+1] = detail end
          if apnsID ~= '' then f[#f+1] = 'apns_id' f[#f+1] = apnsID end
          if token ~= '' then f[#f+1] = 'token' f[#f+1] = token end
          local m = #f
          f[m+1], f[m+2], f[m+3], f[m+4] = 'attempts', ARGV[i+11], 'deliveries', ARGV[i+12]
          f[m+5], f[m+6], f[m+7], f[m+8] = 'worker', worker, 'latency_us', ARGV[i+13]
          if ts ~= '0' then f[#f+1] = 'timestamp_ms' f[#f+1] = ts end
          if maybe == '1' then f[#f+1] = 'maybe_delivered' f[#f+1] = '1' end
          local w = redis.call('XADD', KEYS[2], '*', unpack(f))
          local S, B = lane(E)
          if redis.call('XACK', S, group, B) == 1 then
            acked[#acked+1] = E
            count(k, reason, 1, app, campaign)
          else
            redis.call('XDEL', KEYS[2], w)
            if u then redis.call('XDEL', KEYS[3], u) end
            skipped = skipped + 1
          end
          i = i + 16
        elseif dest == '3' and ARGV[i+3] == '1' and ARGV[i+7] == ARGV[i+2] and ARGV[i+12] == '0' and ARGV[i+13] == '' and ARGV[i+14] == '0' then
          -- A record of an entry all accepted, settled whole: written as it comes unless
          -- its progress says an earlier settle covered some of it (then the general way).
          local n = ARGV[i+2]
          local S, B = lane(E)
          if not redis.call('XPENDING', S, group, B, B, 1)[1] then
            skipped = skipped + 1
            i = i + 15
          elseif n ~= '1' and redis.call('HGET', KEYS[5], E) then
            i = general(i)
          else
            local r = ARGV[i+6] .. ',"count":' .. n .. ',"accepted":' .. n .. ',"accepted_at":"' .. ARGV[i+9] .. '"'
            if ARGV[i+10] ~= '' then r = r .. ',"accepted_ids":[' .. ARGV[i+10] .. ']' end
            if ARGV[i+11] ~= '0' then r = r .. ',"repeats":' .. ARGV[i+11] end
            records[#records+1] = r .. ',"final":true}'
            recordCount = recordCount + tonumber(n)
            quick[#quick+1] = i
            i = i + 15
          end
        else
          i = general(i)
        end
      end
    end)
    local ok3, e3, ok2, e2 = true, nil, true, nil
    if #records > 0 then
      ok3, e3 = pcall(redis.call, 'XADD', KEYS[2], '*', 'v', '3', 'worker', worker, 'count', recordCount,
                      'records', '[' .. table.concat(records, ',') .. ']')
    end
    if #objects > 0 then
      ok2, e2 = pcall(redis.call, 'XADD', KEYS[2], '*', 'v', '2', 'worker', worker, 'count', #objects,
                      'outcomes', '[' .. table.concat(objects, ',') .. ']')
    end
    local acks, drops, sets, shorts = {}, {}, {}, {}
    local marked = #acked
    if ok3 then
      for _, q in ipairs(quick) do
        marked = marked + 1
        acks[#acks+1] = ARGV[q]
        count('a', '', tonumber(ARGV[q+2]), ARGV[q+4], ARGV[q+5])
      end
    end
    for _, m in ipairs(marks) do
      if (ok3 or not m.r3) and (ok2 or not m.r2) then
        marked = marked + 1
        if m.short then shorts[#shorts+1] = m.E end
        if m.final then
          acks[#acks+1] = m.E
          if m.hadP then drops[#drops+1] = m.E end
        else
          sets[#sets+1] = m.E
          sets[#sets+1] = m.map
        end
        for _, c in ipairs(m.counts) do count(c[1], c[2], c[3], m.app, m.campaign) end
      end
    end
    -- Acknowledged and deleted in their own streams: the bulk lane's ids as they are, the fast
    -- lane's without their `f`.
    local function each(list, cmd, withGroup)
      local b, f = {}, {}
      for _, e in ipairs(list) do
        if string.byte(e, 1) == 102 then f[#f+1] = string.sub(e, 2) else b[#b+1] = e end
      end
      for _, p in ipairs({{KEYS[1], b}, {KEYS[7], f}}) do
        if #p[2] > 0 then
          if withGroup then redis.call(cmd, p[1], group, unpack(p[2])) else redis.call(cmd, p[1], unpack(p[2])) end
        end
      end
    end
    each(acks, 'XACK', true)
    for _, e in ipairs(acked) do acks[#acks+1] = e end
    each(acks, 'XDEL', false)
    if #drops > 0 then redis.call('HDEL', KEYS[5], unpack(drops)) end
    if #sets > 0 then redis.call('HSET', KEYS[5], unpack(sets)) end
    for field, n in pairs(inc) do redis.call('HINCRBY', KEYS[6], field, n) end
    local err = nil
    if not ok then err = failure elseif not ok3 then err = e3 elseif not ok2 then err = e2 end
    if err then
      if type(err) == 'table' and err.err then return redis.error_reply(err.err) end
      return redis.error_reply(tostring(err))
    end
    return {marked, skipped, shorts}
    """)

    /// Moves due delayed entries back into the stream as new entries (their fields carry
    /// `origin`, so their ids' guards still name the entry they came from), each into its lane's
    /// stream. KEYS: stream, delayed set, fast stream. ARGV: now (ms), limit, delayed-hash prefix. Returns how many moved.
    static let promote = RedisScript("""
    local due = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
    for _, m in ipairs(due) do
      local h = ARGV[3] .. m
      local f = redis.call('HGETALL', h)
      if #f > 0 then
        -- A member of a fast-lane entry (`f<id>:<index>`) goes back to the fast lane.
        local s = KEYS[1]
        if string.byte(m, 1) == 102 then s = KEYS[3] end
        redis.call('XADD', s, '*', unpack(f))
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
    /// longer ours is left out. All of a listing in one call (issue 31: 5,000 entries took 23
    /// round trips and 2-11 s when each call took what fitted at the largest entry size), up to
    /// a budget of notifications: an entry counts 1, or for a format-2 entry its bytes / 33 (a
    /// packed token's size; text tokens and batch elements are larger, so this is never below
    /// what the entry holds for 32-byte tokens), at most 1,000; the first entry is always taken.
    /// KEYS: stream, written hash, fast stream. ARGV: group, consumer, budget, entry ids (a
    /// fast-lane entry's `f<id>`). Returns {how many ids
    /// were considered (the rest: not taken, for the next call), {{id, fields, deliveries,
    /// written deliveries}, ...}}.
    /// The ids of each lane must be in its stream's order (as a listing gives them).
    static let takeOwn = RedisScript("""
    local budget = tonumber(ARGV[3])
    -- A fast-lane entry is `f<id>` (RedisFastLane.swift), in KEYS[3]; the ids of each lane come
    -- in that stream's order.
    local function lane(e) if string.byte(e, 1) == 102 then return KEYS[3], string.sub(e, 2), 'f' end return KEYS[1], e, '' end
    local lanes, firsts, lasts, counts, pres = {}, {}, {}, {}, {}
    for i = 4, #ARGV do
      local S, B, pre = lane(ARGV[i])
      if not firsts[S] then firsts[S] = B lanes[#lanes+1] = S pres[S] = pre counts[S] = 0 end
      lasts[S] = B
      counts[S] = counts[S] + 1
    end
    -- Per lane, which of the ids are pending with this consumer, and their counts: one listing
    -- over their range instead of an XPENDING per id; an id past a listing cut short by the
    -- count is looked up alone. Their fields likewise: one XRANGE over the range (settled
    -- entries are deleted, so it holds little else; at most n + 100 entries, so that other
    -- consumers' entries between ours cannot make it large), an id past a cut range read alone.
    local mine, fields, cut, rangeCut = {}, {}, {}, {}
    for _, S in ipairs(lanes) do
      local pre = pres[S]
      local limit = 2 * counts[S] + 100
      local rows = redis.call('XPENDING', S, ARGV[1], firsts[S], lasts[S], limit, ARGV[2])
      for _, r in ipairs(rows) do mine[pre .. r[1]] = r[4] end
      cut[S] = #rows >= limit
      local span = counts[S] + 100
      local entries = redis.call('XRANGE', S, firsts[S], lasts[S], 'COUNT', span)
      for _, e in ipairs(entries) do fields[pre .. e[1]] = e[2] end
      rangeCut[S] = #entries >= span
    end
    local out = {}
    local claim = {}
    local used = 0
    local considered = 0
    for i = 4, #ARGV do
      local id = ARGV[i]
      local S, B = lane(id)
      local count = mine[id]
      if count == nil and cut[S] then
        local p = redis.call('XPENDING', S, ARGV[1], B, B, 1, ARGV[2])[1]
        if p then count = p[4] end
      end
      if count then
        local f = fields[id]
        if f == nil and rangeCut[S] then
          local e = redis.call('XRANGE', S, B, B)[1]
          if e then f = e[2] end
        end
        if f then
          local multi = false
          local bytes = 0
          for j = 1, #f, 2 do
            if f[j] == 'v' and f[j + 1] == '2' then multi = true end
            bytes = bytes + #f[j + 1]
          end
          local size = 1
          if multi then size = math.min(1000, math.max(1, math.ceil(bytes / 33))) end
          if #out > 0 and used + size > budget then break end
          used = used + size
          if not claim[S] then claim[S] = {} end
          claim[S][#claim[S] + 1] = B
          out[#out+1] = {id, f, count, tonumber(redis.call('HGET', KEYS[2], id) or 0)}
        else
          out[#out+1] = {id, false, count, 0}
        end
      end
      considered = considered + 1
    end
    -- One XCLAIM per 500 ids of a lane (JUSTID: the counter stays, the idle time restarts).
    for _, S in ipairs(lanes) do
      local ids = claim[S] or {}
      for k = 1, #ids, 500 do
        local args = {S, ARGV[1], ARGV[2], 0}
        for j = k, math.min(k + 499, #ids) do args[#args + 1] = ids[j] end
        args[#args + 1] = 'JUSTID'
        redis.call('XCLAIM', unpack(args))
      end
    end
    return {considered, out}
    """)

    /// Hands back every entry pending with this consumer (a stop that could not finish them,
    /// issue 31): `XCLAIM ... 0 <ids> IDLE <ms> JUSTID` to the same consumer sets each one's idle
    /// time to years without raising its delivery count, so that another worker's next reclaim
    /// takes it at once (a consumer that never comes back, in a scale-down, no longer strands
    /// it for `min_idle_ms`) and this consumer's next life re-reads it as before; both lanes.
    /// KEYS: stream, fast stream. ARGV: group, consumer, idle ms. Returns how many were handed back.
    static let handBack = RedisScript("""
    local n = 0
    for _, S in ipairs({KEYS[2], KEYS[1]}) do
      local start = '-'
      while true do
        local rows = redis.call('XPENDING', S, ARGV[1], start, '+', 1000, ARGV[2])
        if #rows == 0 then break end
        local args = {S, ARGV[1], ARGV[2], 0}
        for _, r in ipairs(rows) do args[#args+1] = r[1] end
        args[#args+1] = 'IDLE'
        args[#args+1] = ARGV[3]
        args[#args+1] = 'JUSTID'
        redis.call('XCLAIM', unpack(args))
        n = n + #rows
        start = '(' .. rows[#rows][1]
      end
    end
    return n
    """)

    /// Takes over entries of *other* consumers idle longer than min-idle (a dead or stuck
    /// worker's), without counting a delivery (`countDelivery` does, when one is sent): this
    /// consumer's own entries are never taken (a slow one of ours is still held; a previous
    /// life's are re-read at start), so a reclaim never raises the count of an entry this worker
    /// holds. An entry deleted from the stream is returned without fields, unclaimed (XCLAIM
    /// would drop it from the pending list without an outcome; the settle's XACK removes it).
    /// The fast lane's entries (`f<id>`) first, then the bulk lane's. KEYS: stream, written hash,
    /// fast stream. ARGV: group, consumer, min-idle ms, cursor (an XPENDING start: "-", "(<id>",
    /// or "(f<id>" in the fast lane), count. Returns {next cursor ("-" after the last page), {{id, fields,
    /// deliveries, written deliveries}, ...}}.
    static let reclaim = RedisScript("""
    local max = tonumber(ARGV[5])
    local out = {}
    -- One lane's page from `start`: each row not ours taken over (fast-lane ids as `f<id>`).
    local function page(S, pre, start, count)
      local rows = redis.call('XPENDING', S, ARGV[1], 'IDLE', tonumber(ARGV[3]), start, '+', count)
      for _, p in ipairs(rows) do
        if p[2] ~= ARGV[2] then
          local id = pre .. p[1]
          local e = redis.call('XRANGE', S, p[1], p[1])[1]
          if e then
            redis.call('XCLAIM', S, ARGV[1], ARGV[2], tonumber(ARGV[3]), p[1], 'JUSTID')
            out[#out+1] = {id, e[2], p[4], tonumber(redis.call('HGET', KEYS[2], id) or 0)}
          else
            out[#out+1] = {id, false, p[4], 0}
          end
        end
      end
      return rows
    end
    -- The fast lane first (a cursor `(f<id>` is in it), then the bulk lane from its start.
    local cursor = ARGV[4]
    local left = max
    if cursor == '-' or string.sub(cursor, 1, 2) == '(f' then
      local start = '-'
      if cursor ~= '-' then start = '(' .. string.sub(cursor, 3) end
      local rows = page(KEYS[3], 'f', start, max)
      if #rows == max and #rows > 0 then return {'(f' .. rows[#rows][1], out} end
      left = max - #rows
      cursor = '-'
    end
    local rows = page(KEYS[1], '', cursor, left)
    local nextCursor = '-'
    if #rows == left and #rows > 0 then nextCursor = '(' .. rows[#rows][1] end
    return {nextCursor, out}
    """)

    /// Counts a delivery of entries about to be sent again (re-delivered: their previous
    /// holder ended without an outcome): each one still pending with this consumer gets its
    /// delivery counter raised by one (`XCLAIM ... RETRYCOUNT n+1 JUSTID`, which also resets its
    /// idle time). KEYS: stream, fast stream. ARGV: group, consumer, entry ids. Returns the new counts, in
    /// order; 0 for an entry no longer this consumer's.
    static let countDelivery = RedisScript("""
    local out = {}
    for i = 3, #ARGV do
      -- A fast-lane entry (`f<id>`) is in KEYS[2].
      local S, B = KEYS[1], ARGV[i]
      if string.byte(B, 1) == 102 then S, B = KEYS[2], string.sub(B, 2) end
      local p = redis.call('XPENDING', S, ARGV[1], B, B, 1, ARGV[2])[1]
      if p then
        local n = p[4] + 1
        redis.call('XCLAIM', S, ARGV[1], ARGV[2], 0, B, 'RETRYCOUNT', n, 'JUSTID')
        out[#out+1] = n
      else
        out[#out+1] = 0
      end
    end
    return out
    """)

    /// Records written deliveries (`QueueRequest.markWritten`): one more for each entry of the
    /// first list, and the entries of the second forgotten. KEYS: written hash. ARGV: how many
    /// entries to add, those entries, then the entries to drop. Returns nothing.
    static let markWritten = RedisScript("""
    local n = tonumber(ARGV[1])
    for i = 2, n + 1 do redis.call('HINCRBY', KEYS[1], ARGV[i], 1) end
    if #ARGV > n + 1 then redis.call('HDEL', KEYS[1], unpack(ARGV, n + 2, #ARGV)) end
    return 0
    """)
}
