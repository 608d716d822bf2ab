#if canImport(Glibc)
import Glibc
#endif
import CHiredis
import SwiftPushRedis

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
/// entries and to take back or reclaim pending ones (RedisStreamScripts). Owns two hiredis
/// connections — one for settling, so that a batch of outcomes is recorded while the worker
/// reads, claims and sends on the other — and is not thread-safe.
public final class RedisStreamQueue: WorkQueue {
    /// Where Redis is and how this consumer reads.
    public struct Options: Sendable {
        /// Where Redis is and how to connect (a single server: the worker's protocol does not
        /// route by slot yet).
        public var redis = RedisConfiguration()
        /// The shard's keys.
        public var keys = StreamKeys()
        /// The consumer group.
        public var group = "senders"
        /// This consumer's name: stable across restarts, so a restarted worker finds its pending
        /// entries.
        public var consumer = "worker-1"
        /// An entry pending this long with another consumer is taken over (reclaimed). Must
        /// exceed the longest send (the clients' deadline and resends), or an entry still in
        /// flight elsewhere is sent twice.
        public var minIdleMillis = 120_000
        /// How long a notification id's guard lives: the window in which a re-delivered or
        /// duplicate entry is recognised.
        public var guardTTLSeconds = 86_400
        /// How outcomes are written: 1, one stream entry per outcome; 2, one entry per settled
        /// batch (`OutcomeRecord.json`, docs/worker.md).
        public var outcomeFormat = 1

        /// Defaults: 127.0.0.1:6379 (plain, no password), shard 0, group `senders`.
        public init() {}
    }

    /// The options in force.
    public let options: Options
    private var connection: RedisConnection?
    /// The settle script's own connection (a settle runs while the other connection is used).
    private var settleConnection: RedisConnection?
    /// A script call sent and not yet answered, kept to be sent again if Redis has lost the
    /// script (NOSCRIPT).
    private struct ScriptCall {
        let script: RedisScript
        let args: RedisArguments
    }
    /// The stream ids of the claim in flight; nil when none is, or it was lost with the
    /// connection.
    private var claimInFlight: [String]?
    private var settleInFlight: ScriptCall?
    /// A read begun by `beginReadNew`: sent (its reply still on the wire) or received (waiting
    /// for `readNew`). Replies come in the order commands were sent, so any other command on
    /// the main connection first takes this one's reply off the wire (`collectReadAhead`).
    private enum ReadAhead {
        case sent
        case received([QueueEntry])
    }
    private var readAhead: ReadAhead?
    private var reclaimCursor = "-"

    /// A queue that connects on `open()`.
    public init(options: Options) { self.options = options }

    public func open() throws(QueueError) {
        connection = nil
        settleConnection = nil
        claimInFlight = nil
        settleInFlight = nil
        readAhead = nil
        do throws(RedisError) {
            let connector = try RedisConnector(options.redis)
            let c = try connector.connect()
            // 0, not $: entries added before the group existed must not be skipped.
            let r = try c.command("XGROUP", "CREATE", options.keys.stream, options.group, "0", "MKSTREAM")
            if case .error(let e) = r, !e.hasPrefix("BUSYGROUP") {
                throw RedisError(description: "XGROUP CREATE: \(e)", connectionLost: false)
            }
            settleConnection = try connector.connect()
            connection = c
        } catch {
            throw QueueError(error.description, connectionLost: error.connectionLost)
        }
    }

    public func ownPending(after cursor: String?, max: Int) throws(QueueError) -> [PendingEntry] {
        // XPENDING reads the pending list only: no delivery is counted, no idle time reset.
        let start = cursor.map { "(" + $0 } ?? "-"
        return try run(Self.packed(["XPENDING", options.keys.stream, options.group, start, "+", String(max), options.consumer])).elements.compactMap { row in
            let f = row.elements
            guard f.count == 4, let id = f[0].text, let n = f[3].integer else { return nil }
            return PendingEntry(entryID: id, deliveries: Int(n))
        }
    }

    public func takeOwn(_ entryIDs: [String]) throws(QueueError) -> [QueueEntry] {
        if entryIDs.isEmpty { return [] }
        let reply = try runScript(RedisStreamScripts.takeOwn, keys: [options.keys.stream], on: connection) { args in
            args.append(options.group)
            args.append(options.consumer)
            for id in entryIDs { args.append(id) }
        }
        return reply.elements.compactMap(Self.entry(fromScriptRow:))
    }

    public func countDelivery(_ entryIDs: [String]) throws(QueueError) -> [Int?] {
        if entryIDs.isEmpty { return [] }
        let reply = try runScript(RedisStreamScripts.countDelivery, keys: [options.keys.stream], on: connection) { args in
            args.append(options.group)
            args.append(options.consumer)
            for id in entryIDs { args.append(id) }
        }
        let counts = reply.elements.map { $0.integer.flatMap { $0 > 0 ? Int($0) : nil } }
        guard counts.count == entryIDs.count else {
            throw QueueError("countDelivery: \(counts.count) counts for \(entryIDs.count) entries", connectionLost: false)
        }
        return counts
    }

    /// An entry from a script's `{id, fields, deliveries}` row (fields nil for a deleted entry:
    /// no fields).
    static func entry(fromScriptRow row: RedisReply) -> QueueEntry? {
        let p = row.elements
        guard p.count == 3, let id = p[0].text else { return nil }
        let flat = p[1].elements
        var fields: [(name: [UInt8], value: [UInt8])] = []
        for i in stride(from: 0, to: flat.count / 2 * 2, by: 2) {
            if case .string(let n) = flat[i], case .string(let v) = flat[i + 1] { fields.append((n, v)) }
        }
        return QueueEntry(entryID: id, fields: fields, deliveries: Int(p[2].integer ?? 1))
    }

    public func readNew(max: Int, blockMillis: Int) throws(QueueError) -> [QueueEntry] {
        if let entries = try takeReadAheadIfAny() { return entries }
        var args = ["XREADGROUP", "GROUP", options.group, options.consumer, "COUNT", String(max)]
        if blockMillis > 0 { args += ["BLOCK", String(blockMillis)] }
        args += ["STREAMS", options.keys.stream, ">"]
        try io(connection) { c throws(RedisError) in try c.send(Self.packed(args)) }
        return try receiveEntries()
    }

    /// What a read begun ahead delivered (its reply taken in now if it is still coming), and
    /// never a new read: [] when none was begun. For a stopping worker, whose entries must not
    /// grow by a fresh read.
    public func takeReadAhead() throws(QueueError) -> [QueueEntry] {
        try takeReadAheadIfAny() ?? []
    }

    /// The read begun ahead's entries, or nil when none was begun.
    private func takeReadAheadIfAny() throws(QueueError) -> [QueueEntry]? {
        try collectReadAhead()
        guard case .received(let entries) = readAhead else { return nil }
        readAhead = nil
        return entries
    }

    /// The entries of the XREADGROUP reply next on the main connection, read in place from
    /// hiredis's tree (`entries(fromRead:)`); an error reply is thrown as such.
    private func receiveEntries() throws(QueueError) -> [QueueEntry] {
        let (entries, error) = try io(connection) { c throws(RedisError) in try c.receive(parsing: Self.entries(fromRead:)) }
        if let error { _ = try checked(error) }
        return entries
    }

    /// `args` packed for sending.
    static func packed(_ args: [String]) -> RedisArguments {
        var packed = RedisArguments(reservingBytes: 128)
        for a in args { packed.append(a) }
        return packed
    }

    public func beginReadNew(max: Int) throws(QueueError) {
        try collectReadAhead()
        guard readAhead == nil, max > 0 else { return }
        let args = Self.packed(["XREADGROUP", "GROUP", options.group, options.consumer, "COUNT", String(max), "STREAMS", options.keys.stream, ">"])
        try io(connection) { c throws(RedisError) in try c.send(args) }
        readAhead = .sent
    }

    /// Takes the reply of a read begun by `beginReadNew` off the wire (waiting for it), so that
    /// the next command's reply is the next one read.
    private func collectReadAhead() throws(QueueError) {
        guard case .sent = readAhead else { return }
        readAhead = nil
        readAhead = .received(try receiveEntries())
    }

    /// The claim is one `SET <guard> <entry> NX GET EX <ttl>` per entry, pipelined: each is
    /// atomic on its own, which is all a claim needs, and plain commands cost Redis less than
    /// the same SETs made from a script (no Lua strings, no script call per SET).
    public func beginClaim(_ entries: [(id: String?, entryID: String)]) throws(QueueError) {
        try collectReadAhead()
        claimInFlight = nil
        let ttl = String(options.guardTTLSeconds)
        try io(connection) { c throws(RedisError) in
            var args = RedisArguments(reservingBytes: 128)
            for e in entries {
                args.removeAll()
                for a in ["SET", options.keys.guardKey(id: e.id, entryID: e.entryID), e.entryID, "NX", "GET", "EX", ttl] { args.append(a) }
                try c.append(args)
            }
            try c.flush()
        }
        claimInFlight = entries.map(\.entryID)
    }

    /// One claim reply: the entry's state, or a reply that is not a guard (an error).
    private enum ClaimReply {
        case state(ClaimState)
        case other(RedisReply)
    }

    public func finishClaim() throws(QueueError) -> [ClaimState] {
        guard let entryIDs = claimInFlight else { throw QueueError("the claim was lost with the connection", connectionLost: true) }
        claimInFlight = nil
        var states: [ClaimState] = []
        states.reserveCapacity(entryIDs.count)
        var failure: String?
        // Every reply is read, even after an error reply, so the connection stays in step.
        for entryID in entryIDs {
            // Compared in place in hiredis's reply: nearly every guard is nil or the entry itself.
            let reply = try io(connection) { c throws(RedisError) in
                try c.receive { r -> ClaimReply in
                    if r.pointee.type == REDIS_REPLY_NIL { return .state(.send) }
                    guard let owner = Self.bytes(r) else { return .other(RedisConnection.convert(r)) }
                    var id = entryID
                    return id.withUTF8 { e -> ClaimReply in
                        let mine = owner.count >= e.count && memcmp(owner.baseAddress!, e.baseAddress!, e.count) == 0
                        if mine && owner.count == e.count { return .state(.send) }
                        if mine && owner.count == e.count + 1 && owner[e.count] == UInt8(ascii: "!") { return .state(.recorded) }
                        return .state(.duplicate(of: String(decoding: owner, as: UTF8.self)))
                    }
                }
            }
            switch reply {
            case .state(let state): states.append(state)
            case .other(.error(let e)): failure = failure ?? e
            case .other(let other): failure = failure ?? "unexpected claim reply \(other)"
            }
        }
        if let failure { _ = try checked(.error(failure)) }
        return states
    }

    public func beginSettle(_ settlements: [Settlement]) throws(QueueError) {
        if settlements.isEmpty { return }
        let k = options.keys
        let script = options.outcomeFormat == 2 ? RedisStreamScripts.settleBatched : RedisStreamScripts.settle
        settleInFlight = try beginScript(script, keys: [k.stream, k.outcomes, k.unregistered, k.delayed],
                                         on: settleConnection, reservingBytes: settlements.count * 200) { args in
            args.append(options.group)
            args.append(options.consumer)
            args.append(integer: Int64(options.guardTTLSeconds))
            args.append(k.delayedEntryPrefix)
            for s in settlements { Self.append(s, to: &args, keys: k, worker: options.consumer, format: options.outcomeFormat) }
        }
    }

    public func finishSettle() throws(QueueError) {
        guard let call = settleInFlight else { return }
        settleInFlight = nil
        _ = try finishScript(call, on: settleConnection)
    }

    /// One settlement's arguments for the settle script of outcome format `format` (its kinds:
    /// RedisStreamScripts.settle, settleBatched).
    static func append(_ settlement: Settlement, to args: inout RedisArguments, keys: StreamKeys, worker: String, format: Int = 1) {
        switch settlement {
        case .record(let o) where format == 2:
            let unregistered = o.tokenIsGone ? o.unregisteredFields() : []
            args.append("j")
            args.append(keys.guardKey(id: o.id.isEmpty ? nil : o.id, entryID: o.entryID))
            args.append(o.entryID)
            args.append(o.json())
            args.append(integer: Int64(unregistered.count))
            for f in unregistered { args.append(f) }
        case .record(let o):
            args.append(o.hasSentShape ? "s" : "o")
            args.append(keys.guardKey(id: o.id.isEmpty ? nil : o.id, entryID: o.entryID))
            args.append(o.entryID)
            if o.hasSentShape {
                o.appendSentShapeValues(to: &args)
                return
            }
            let fields = o.fields(worker: worker)
            let unregistered = o.tokenIsGone ? o.unregisteredFields() : []
            args.append(integer: Int64(fields.count))
            args.append(integer: Int64(unregistered.count))
            for f in fields { args.append(f) }
            for f in unregistered { args.append(f) }
        case .acknowledge(let entryID):
            args.append("a")
            args.append("-")
            args.append(entryID)
        case .delay(let entry, let id, let due):
            var fields = entry.fields.filter { $0.name != Array("retries".utf8) }
            let retries = entry.value("retries").flatMap { Int(String(decoding: $0, as: UTF8.self)) } ?? 0
            fields.append((Array("retries".utf8), Array(String(retries + 1).utf8)))
            args.append("d")
            args.append(keys.guardKey(id: id, entryID: entry.entryID))
            args.append(entry.entryID)
            args.append(integer: Int64(fields.count * 2))
            args.append(integer: due)
            for f in fields { args.append(f.name); args.append(f.value) }
        }
    }

    public func reclaim(max: Int) throws(QueueError) -> [QueueEntry] {
        let reply = try runScript(RedisStreamScripts.reclaim, keys: [options.keys.stream], on: connection) { args in
            for a in [options.group, options.consumer, String(options.minIdleMillis), reclaimCursor, String(max)] { args.append(a) }
        }
        let parts = reply.elements
        guard parts.count == 2 else { return [] }
        reclaimCursor = parts[0].text ?? "-"
        return parts[1].elements.compactMap(Self.entry(fromScriptRow:))
    }

    public func promoteDue(nowMillis: Int64, max: Int) throws(QueueError) -> Int {
        let k = options.keys
        let reply = try runScript(RedisStreamScripts.promote, keys: [k.stream, k.delayed], on: connection) { args in
            for a in [String(nowMillis), String(max), k.delayedEntryPrefix, k.guardPrefix] { args.append(a) }
        }
        return Int(reply.integer ?? 0)
    }

    /// The group's pending count, and its lag: 0 when the group has delivered up to the stream's
    /// last entry, whatever XINFO GROUPS's `lag` says (Redis 7.0's entries-read counter behind
    /// it can stay stale after a restart: issue 23); Redis's figure otherwise (nil when it
    /// cannot tell).
    public func backlog() throws(QueueError) -> (pending: Int, lag: Int?) {
        // XINFO GROUPS: one flat field/value array per group (RESP2); "lag" exists since 7.0.
        for group in try run(Self.packed(["XINFO", "GROUPS", options.keys.stream])).elements {
            var fields: [String: RedisReply] = [:]
            let flat = group.elements
            var i = 0
            while i + 1 < flat.count { fields[flat[i].text ?? ""] = flat[i + 1]; i += 2 }
            guard fields["name"]?.text == options.group else { continue }
            let pending = Int(fields["pending"]?.integer ?? 0)
            let last = try run(Self.packed(["XREVRANGE", options.keys.stream, "+", "-", "COUNT", "1"])).elements.first?.elements.first?.text
            if let delivered = fields["last-delivered-id"]?.text.flatMap(StreamID.init),
               last.flatMap(StreamID.init).map({ delivered >= $0 }) ?? true {
                return (pending, 0)
            }
            return (pending, fields["lag"]?.integer.map { Int($0) })
        }
        return (0, nil)
    }

    /// Runs one command; an error reply becomes a QueueError (not a lost connection).
    private func run(_ args: RedisArguments) throws(QueueError) -> RedisReply {
        try collectReadAhead()
        try io(connection) { c throws(RedisError) in try c.send(args) }
        return try checked(try io(connection) { c throws(RedisError) in try c.receive() })
    }

    /// `reply`, unless it is an error reply: that becomes a QueueError.
    private func checked(_ reply: RedisReply) throws(QueueError) -> RedisReply {
        if case .error(let e) = reply {
            // A restarted Redis still loading its AOF answers LOADING, and one that lost its
            // data NOGROUP: both are outages (reconnect, recreate the group), not bad commands.
            let outage = e.hasPrefix("LOADING") || e.hasPrefix("NOGROUP")
            if outage { dropConnections() }
            throw QueueError("Redis: \(e)", connectionLost: outage)
        }
        return reply
    }

    /// Runs `body` on connection `c`; a lost connection drops both (open() makes them again:
    /// whatever was in flight on either is retried by the worker, every operation being
    /// idempotent).
    private func io<T>(_ c: RedisConnection?, _ body: (RedisConnection) throws(RedisError) -> T) throws(QueueError) -> T {
        guard let c else { throw QueueError("not connected to Redis", connectionLost: true) }
        do throws(RedisError) {
            return try body(c)
        } catch {
            dropConnections()
            throw QueueError(error.description, connectionLost: true)
        }
    }

    private func dropConnections() {
        connection = nil
        settleConnection = nil
        claimInFlight = nil
        settleInFlight = nil
        readAhead = nil
    }

    /// Sends `script` on `keys` and the arguments `fill` appends, by its SHA-1 (EVALSHA),
    /// without waiting for the reply (`finishScript`).
    private func beginScript(_ script: RedisScript, keys: [String], on c: RedisConnection?, reservingBytes: Int = 256,
                             _ fill: (inout RedisArguments) -> Void) throws(QueueError) -> ScriptCall {
        var args = RedisArguments(reservingBytes: reservingBytes)
        args.append("EVALSHA")
        args.append(script.sha)
        args.append(integer: Int64(keys.count))
        for key in keys { args.append(key) }
        fill(&args)
        try io(c) { c throws(RedisError) in try c.send(args) }
        return ScriptCall(script: script, args: args)
    }

    /// The reply to `call`. When Redis does not know the script (a new or restarted server,
    /// `SCRIPT FLUSH`), it is loaded (`SCRIPT LOAD`) and the call sent once more.
    private func finishScript(_ call: ScriptCall, on c: RedisConnection?) throws(QueueError) -> RedisReply {
        let first = try io(c) { c throws(RedisError) in try c.receive() }
        guard case .error(let e) = first, e.hasPrefix("NOSCRIPT") else { return try checked(first) }
        var load = RedisArguments()
        for a in ["SCRIPT", "LOAD", call.script.body] { load.append(a) }
        _ = try checked(try io(c) { c throws(RedisError) in try c.command(load) })
        return try checked(try io(c) { c throws(RedisError) in try c.command(call.args) })
    }

    /// Runs `script` and waits for its reply.
    private func runScript(_ script: RedisScript, keys: [String], on c: RedisConnection?,
                           _ fill: (inout RedisArguments) -> Void) throws(QueueError) -> RedisReply {
        if c === connection { try collectReadAhead() }
        return try finishScript(try beginScript(script, keys: keys, on: c, fill), on: c)
    }

    /// Entries of an XREADGROUP reply, `[[stream, [[id, [f, v, ...]], ...]]]` or nil, read in
    /// place from hiredis's tree: each entry's fields are copied once, into its packed storage.
    /// An error reply comes back as the second element (and no entries).
    static func entries(fromRead r: UnsafePointer<redisReply>) -> ([QueueEntry], RedisReply?) {
        if r.pointee.type == REDIS_REPLY_ERROR { return ([], RedisConnection.convert(r)) }
        guard let stream = element(r, 0), stream.pointee.type == REDIS_REPLY_ARRAY, stream.pointee.elements == 2,
              let list = element(stream, 1) else { return ([], nil) }
        var entries: [QueueEntry] = []
        entries.reserveCapacity(list.pointee.type == REDIS_REPLY_ARRAY ? Int(list.pointee.elements) : 0)
        for i in 0..<(list.pointee.type == REDIS_REPLY_ARRAY ? Int(list.pointee.elements) : 0) {
            guard let e = element(list, i), e.pointee.type == REDIS_REPLY_ARRAY, e.pointee.elements == 2,
                  let id = element(e, 0).flatMap(text) else { continue }
            entries.append(entry(id: id, fields: element(e, 1)))
        }
        return (entries, nil)
    }

    /// An entry from its id and flat field list (a deleted entry has nil fields: no fields).
    static func entry(id: String, fields: UnsafePointer<redisReply>?) -> QueueEntry {
        guard let fields, fields.pointee.type == REDIS_REPLY_ARRAY else {
            return QueueEntry(entryID: id, packer: QueueEntry.Packer(fieldCount: 0, byteCount: 0))
        }
        let n = Int(fields.pointee.elements) / 2 * 2
        var byteCount = 0
        for i in 0..<n { byteCount += element(fields, i).map { Int($0.pointee.len) } ?? 0 }
        var packer = QueueEntry.Packer(fieldCount: n / 2, byteCount: byteCount)
        for i in stride(from: 0, to: n, by: 2) {
            guard let name = element(fields, i).flatMap(bytes), let value = element(fields, i + 1).flatMap(bytes) else { continue }
            packer.append(name)
            packer.append(value)
        }
        return QueueEntry(entryID: id, packer: packer)
    }

    /// Element `i` of array reply `r`, if it has one.
    private static func element(_ r: UnsafePointer<redisReply>, _ i: Int) -> UnsafePointer<redisReply>? {
        guard r.pointee.type == REDIS_REPLY_ARRAY, i < Int(r.pointee.elements), let e = r.pointee.element[i] else { return nil }
        return UnsafePointer(e)
    }

    /// The bytes of bulk string `r` (valid while the reply lives).
    private static func bytes(_ r: UnsafePointer<redisReply>) -> UnsafeRawBufferPointer? {
        guard r.pointee.type == REDIS_REPLY_STRING else { return nil }
        return UnsafeRawBufferPointer(start: r.pointee.str, count: Int(r.pointee.len))
    }

    /// Bulk string `r` as text.
    private static func text(_ r: UnsafePointer<redisReply>) -> String? {
        bytes(r).map { String(decoding: $0, as: UTF8.self) }
    }
}
