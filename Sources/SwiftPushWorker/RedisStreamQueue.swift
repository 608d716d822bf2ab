/// The names a shard's keys go by. One stream per shard; the hash tag `{shard}` keeps every key
/// of a shard in one cluster slot, so one Lua script may touch them all.
public struct StreamKeys: Sendable, Equatable {
    /// The notification stream (`push:{s}`).
    public let stream: String
    /// The outcomes stream (`outcomes:{s}`).
    public let outcomes: String
    /// Tokens APNs reported gone (410) (`unregistered:{s}`).
    public let unregistered: String
    /// The delayed-retry sorted set (`delayed:{s}`), scored by due time in ms.
    public let delayed: String
    /// Prefix of the delayed entries' field hashes (`delayed:{s}:<entry id>`).
    public let delayedEntryPrefix: String
    /// Prefix of the per-notification guards (`out:{s}:id:<id>`).
    public let guardPrefix: String

    /// The keys of shard `shard` ("0" by default).
    public init(shard: String = "0") {
        stream = "push:{\(shard)}"
        outcomes = "outcomes:{\(shard)}"
        unregistered = "unregistered:{\(shard)}"
        delayed = "delayed:{\(shard)}"
        delayedEntryPrefix = "delayed:{\(shard)}:"
        guardPrefix = "out:{\(shard)}:"
    }

    /// The guard key of a notification id, or of an entry that has no valid id.
    public func guardKey(id: String?, entryID: String) -> String {
        if let id { return guardPrefix + "id:" + id }
        return guardPrefix + "entry:" + entryID
    }
}

/// `WorkQueue` on a Redis stream with a consumer group (see docs/worker.md for the protocol):
/// XREADGROUP to read, Lua scripts to claim, settle (record + XACK) and promote delayed
/// entries, XAUTOCLAIM to reclaim. Owns one hiredis connection; not thread-safe.
public final class RedisStreamQueue: WorkQueue {
    /// Where Redis is and how this consumer reads.
    public struct Options: Sendable {
        /// Redis host.
        public var host = "127.0.0.1"
        /// Redis port.
        public var port = 6379
        /// The shard's keys.
        public var keys = StreamKeys()
        /// The consumer group.
        public var group = "senders"
        /// This consumer's name: stable across restarts, so a restarted worker finds its pending
        /// entries.
        public var consumer = "worker-1"
        /// An entry pending this long with another consumer is taken over by XAUTOCLAIM. Must
        /// exceed the longest send (the clients' deadline and resends), or an entry still in
        /// flight elsewhere is sent twice.
        public var minIdleMillis = 120_000
        /// How long a notification id's guard lives: the window in which a re-delivered or
        /// duplicate entry is recognised.
        public var guardTTLSeconds = 86_400

        /// Defaults: 127.0.0.1:6379, shard 0, group `senders`.
        public init() {}
    }

    /// The options in force.
    public let options: Options
    private var connection: RedisConnection?
    private var reclaimCursor = "0-0"

    /// A queue that connects on `open()`.
    public init(options: Options) { self.options = options }

    public func open() throws(QueueError) {
        connection = nil
        do throws(RedisError) {
            let c = try RedisConnection(host: options.host, port: options.port, commandTimeoutMillis: 15_000)
            // 0, not $: entries added before the group existed must not be skipped.
            let r = try c.command("XGROUP", "CREATE", options.keys.stream, options.group, "0", "MKSTREAM")
            if case .error(let e) = r, !e.hasPrefix("BUSYGROUP") {
                throw RedisError(description: "XGROUP CREATE: \(e)", connectionLost: false)
            }
            connection = c
        } catch {
            throw QueueError(error.description, connectionLost: error.connectionLost)
        }
    }

    public func readOwnPending(after cursor: String, max: Int) throws(QueueError) -> [QueueEntry] {
        let reply = try run(["XREADGROUP", "GROUP", options.group, options.consumer, "COUNT", String(max),
                             "STREAMS", options.keys.stream, cursor].map { Array($0.utf8) })
        var entries = Self.entries(fromRead: reply)
        guard let first = entries.first?.entryID, let last = entries.last?.entryID else { return entries }
        // The delivery counts (re-reading counts as a delivery), so that an entry that keeps
        // coming back to a crash-looping worker is dead-lettered like a reclaimed one.
        let pending = try run(["XPENDING", options.keys.stream, options.group, first, last, String(entries.count),
                               options.consumer].map { Array($0.utf8) })
        var counts: [String: Int] = [:]
        for p in pending.elements {
            let f = p.elements
            if f.count == 4, let id = f[0].text, let n = f[3].integer { counts[id] = Int(n) }
        }
        for i in entries.indices { entries[i].deliveries = counts[entries[i].entryID] ?? 1 }
        return entries
    }

    public func readNew(max: Int, blockMillis: Int) throws(QueueError) -> [QueueEntry] {
        var args = ["XREADGROUP", "GROUP", options.group, options.consumer, "COUNT", String(max)]
        if blockMillis > 0 { args += ["BLOCK", String(blockMillis)] }
        args += ["STREAMS", options.keys.stream, ">"]
        return Self.entries(fromRead: try run(args.map { Array($0.utf8) }))
    }

    public func claim(_ entries: [(id: String?, entryID: String)]) throws(QueueError) -> [ClaimState] {
        if entries.isEmpty { return [] }
        var args = RedisArguments(reservingBytes: entries.count * 60)
        for a in ["EVAL", RedisStreamScripts.claim, "0", String(options.guardTTLSeconds)] { args.append(a) }
        for e in entries {
            args.append(options.keys.guardKey(id: e.id, entryID: e.entryID))
            args.append(e.entryID)
        }
        let states = try run(args).elements
        guard states.count == entries.count else { throw QueueError("claim script returned \(states.count) states for \(entries.count) entries", connectionLost: false) }
        return states.map { s in
            switch s {
            case .integer(0): return .send
            case .integer(_): return .recorded
            default: return .duplicate(of: s.text ?? "?")
            }
        }
    }

    public func settle(_ settlements: [Settlement]) throws(QueueError) {
        if settlements.isEmpty { return }
        let k = options.keys
        var args = RedisArguments(reservingBytes: settlements.count * 400)
        for a in ["EVAL", RedisStreamScripts.settle, "4", k.stream, k.outcomes, k.unregistered, k.delayed,
                  options.group, String(options.guardTTLSeconds), k.delayedEntryPrefix] { args.append(a) }
        for s in settlements {
            switch s {
            case .record(let o):
                let fields = o.fields(worker: options.consumer)
                let unregistered = o.tokenIsGone ? o.unregisteredFields() : []
                args.append("o")
                args.append(k.guardKey(id: o.id.isEmpty ? nil : o.id, entryID: o.entryID))
                args.append(o.entryID)
                args.append(String(fields.count))
                args.append(String(unregistered.count))
                for f in fields { args.append(f) }
                for f in unregistered { args.append(f) }
            case .acknowledge(let entryID):
                for a in ["a", "-", entryID, "0", "0"] { args.append(a) }
            case .delay(let entry, let id, let due):
                var fields = entry.fields.filter { $0.name != Array("retries".utf8) }
                let retries = entry.value("retries").flatMap { Int(String(decoding: $0, as: UTF8.self)) } ?? 0
                fields.append((Array("retries".utf8), Array(String(retries + 1).utf8)))
                for a in ["d", k.guardKey(id: id, entryID: entry.entryID), entry.entryID, String(fields.count * 2), String(due)] {
                    args.append(a)
                }
                for f in fields { args.append(f.name); args.append(f.value) }
            }
        }
        _ = try run(args)
    }

    public func reclaim(max: Int) throws(QueueError) -> [QueueEntry] {
        let reply = try run(["EVAL", RedisStreamScripts.reclaim, "1", options.keys.stream, options.group, options.consumer,
                             String(options.minIdleMillis), reclaimCursor, String(max)].map { Array($0.utf8) })
        let parts = reply.elements
        guard parts.count == 2 else { return [] }
        reclaimCursor = parts[0].text ?? "0-0"
        return parts[1].elements.compactMap { e in
            let p = e.elements
            guard p.count == 3, let id = p[0].text else { return nil }
            var entry = Self.entry(id: id, fields: p[1])
            entry.deliveries = Int(p[2].integer ?? 1)
            return entry
        }
    }

    public func promoteDue(nowMillis: Int64, max: Int) throws(QueueError) -> Int {
        let k = options.keys
        let reply = try run(["EVAL", RedisStreamScripts.promote, "2", k.stream, k.delayed, String(nowMillis), String(max),
                             k.delayedEntryPrefix, k.guardPrefix].map { Array($0.utf8) })
        return Int(reply.integer ?? 0)
    }

    public func backlog() throws(QueueError) -> (pending: Int, lag: Int?) {
        // XINFO GROUPS: one flat field/value array per group (RESP2); "lag" exists since 7.0.
        for group in try run(["XINFO", "GROUPS", options.keys.stream].map { Array($0.utf8) }).elements {
            var fields: [String: RedisReply] = [:]
            let flat = group.elements
            var i = 0
            while i + 1 < flat.count { fields[flat[i].text ?? ""] = flat[i + 1]; i += 2 }
            guard fields["name"]?.text == options.group else { continue }
            return (Int(fields["pending"]?.integer ?? 0), fields["lag"]?.integer.map { Int($0) })
        }
        return (0, nil)
    }

    /// Runs one command; an error reply becomes a QueueError (not a lost connection).
    private func run(_ args: [[UInt8]]) throws(QueueError) -> RedisReply {
        var packed = RedisArguments()
        for a in args { packed.append(a) }
        return try run(packed)
    }

    /// Runs one command given packed; an error reply becomes a QueueError.
    private func run(_ args: RedisArguments) throws(QueueError) -> RedisReply {
        guard let c = connection else { throw QueueError("not connected to Redis", connectionLost: true) }
        let reply: RedisReply
        do throws(RedisError) {
            reply = try c.command(args)
        } catch {
            connection = nil
            throw QueueError(error.description, connectionLost: true)
        }
        if case .error(let e) = reply {
            // A restarted Redis still loading its AOF answers LOADING, and one that lost its
            // data NOGROUP: both are outages (reconnect, recreate the group), not bad commands.
            let outage = e.hasPrefix("LOADING") || e.hasPrefix("NOGROUP")
            if outage { connection = nil }
            throw QueueError("Redis: \(e)", connectionLost: outage)
        }
        return reply
    }

    /// Entries of an XREADGROUP reply: [[stream, [[id, [f, v, ...]], ...]]], or nil.
    static func entries(fromRead reply: RedisReply) -> [QueueEntry] {
        guard let stream = reply.elements.first?.elements, stream.count == 2 else { return [] }
        return stream[1].elements.compactMap { e in
            let p = e.elements
            guard p.count == 2, let id = p[0].text else { return nil }
            return entry(id: id, fields: p[1])
        }
    }

    /// An entry from its id and flat field list (a deleted entry has nil fields: no fields).
    static func entry(id: String, fields: RedisReply) -> QueueEntry {
        let flat = fields.elements
        var pairs: [(name: [UInt8], value: [UInt8])] = []
        pairs.reserveCapacity(flat.count / 2)
        var i = 0
        while i + 1 < flat.count {
            if case .string(let n) = flat[i], case .string(let v) = flat[i + 1] { pairs.append((n, v)) }
            i += 2
        }
        return QueueEntry(entryID: id, fields: pairs)
    }
}
