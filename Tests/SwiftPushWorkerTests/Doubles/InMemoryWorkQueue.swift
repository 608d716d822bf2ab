@testable import SwiftPushWorker
@testable import SwiftPushWorkerMachine
@testable import SwiftPushWorkerRedis

/// `WorkQueue` in memory: one consumer's view of an `InMemoryShard`, with the semantics of the
/// Redis protocol (`RedisStreamScripts`), and faults a test can inject into its next requests
/// (a lost connection before or after a request runs, an error reply). For the machine's unit
/// tests; `WorkQueueContractTests` runs the same scenarios against Redis.
public final class InMemoryWorkQueue: WorkQueue {
    /// A fault for the next request.
    public enum Fault: Sendable {
        /// The connection is lost before the request reaches the queue.
        case lostBefore
        /// The request runs, and its reply is lost with the connection.
        case lostAfter
        /// The request fails with an error reply (the connection stays).
        case errorReply(String)
    }

    /// The shared keys.
    public let shard: InMemoryShard
    /// This consumer's name.
    public let consumer: String
    /// The reclaim's min-idle and the guards' lifetime.
    public let minIdleMillis: Int
    public let guardTTLSeconds: Int
    /// Faults for the next requests, in order.
    public var faults: [Fault] = []
    /// Whether the connection is up (`open` brings it up; a lost one stays down until then).
    public private(set) var isOpen = false
    /// Requests performed (for tests that count round trips), by kind.
    public private(set) var performed: [String: Int] = [:]

    public init(shard: InMemoryShard, consumer: String, minIdleMillis: Int = 120_000, guardTTLSeconds: Int = 86_400) {
        self.shard = shard
        self.consumer = consumer
        self.minIdleMillis = minIdleMillis
        self.guardTTLSeconds = guardTTLSeconds
    }

    public func open() throws(QueueError) { isOpen = true }

    public func perform(_ request: QueueRequest) throws(QueueError) -> QueueReply {
        guard isOpen else { throw QueueError("not connected", connectionLost: true) }
        performed[Self.kind(request), default: 0] += 1
        if !faults.isEmpty {
            switch faults.removeFirst() {
            case .lostBefore:
                isOpen = false
                throw QueueError("connection lost (injected)", connectionLost: true)
            case .lostAfter:
                _ = try run(request)
                isOpen = false
                throw QueueError("connection lost after the request ran (injected)", connectionLost: true)
            case .errorReply(let text):
                throw QueueError("Redis: \(text)", connectionLost: false)
            }
        }
        return try run(request)
    }

    /// A request's name (for `performed`).
    static func kind(_ request: QueueRequest) -> String {
        switch request {
        case .read: return "read"
        case .readFast: return "readFast"
        case .claim: return "claim"
        case .settle: return "settle"
        case .ownPending: return "ownPending"
        case .takeOwn: return "takeOwn"
        case .handBack: return "handBack"
        case .countDelivery: return "countDelivery"
        case .markWritten: return "markWritten"
        case .reclaim: return "reclaim"
        case .promote: return "promote"
        case .backlog: return "backlog"
        case .heartbeat: return "heartbeat"
        case .dropHeartbeat: return "dropHeartbeat"
        case .controls: return "controls"
        case .park: return "park"
        case .budget: return "budget"
        }
    }

    private func run(_ request: QueueRequest) throws(QueueError) -> QueueReply {
        let s = shard
        switch request {
        case .read(let max, _):
            // The fast lane first, then the bulk lane, up to `max` of each (COUNT is per stream).
            return .entries(readFast(max) + readBulk(max))
        case .readFast(let max, _):
            return .entries(readFast(max))
        case .claim(let entries):
            return .claimed(entries.map(claim))
        case .settle(let settlements):
            return try InMemorySettle(shard: s, worker: consumer).apply(settlements)
        case .ownPending(let after, let max):
            let cursor = after.flatMap(InMemoryShard.order)
            let mine = s.pending.filter { $0.value.consumer == consumer }
                .compactMap { (k, v) in InMemoryShard.order(k).map { ($0, k, v) } }
                .filter { cursor == nil || $0.0 > cursor! }
                .sorted { $0.0 < $1.0 }
                .prefix(max)
            return .pending(mine.map { PendingEntry(entryID: $0.1, deliveries: $0.2.deliveries) })
        case .takeOwn(let ids, let budget):
            var out: [QueueEntry] = []
            var used = 0, considered = 0
            for id in ids {
                guard var p = s.pending[id], p.consumer == consumer else {
                    considered += 1
                    continue
                }
                if let e = s.entry(id) {
                    let n = Self.takeBackSize(e.fields)
                    if !out.isEmpty && used + n > budget { break }
                    used += n
                    p.deliveredMillis = s.nowMillis
                    s.pending[id] = p
                    out.append(QueueEntry(entryID: id, fields: e.fields, deliveries: p.deliveries))
                } else {
                    out.append(QueueEntry(entryID: id, fields: [], deliveries: p.deliveries))
                }
                out[out.count - 1].written = s.written[id] ?? 0
                considered += 1
            }
            return .takenBack(out, considered: considered)
        case .handBack(let idle):
            var n = 0
            for (id, var p) in s.pending where p.consumer == consumer {
                p.deliveredMillis = s.nowMillis - idle
                s.pending[id] = p
                n += 1
            }
            return .handedBack(n)
        case .countDelivery(let ids):
            return .counted(ids.map { id -> Int? in
                guard var p = s.pending[id], p.consumer == consumer else { return nil }
                p.deliveries += 1
                p.deliveredMillis = s.nowMillis
                s.pending[id] = p
                return p.deliveries
            })
        case .reclaim(let cursor, let max):
            let start = cursor == "-" ? nil : InMemoryShard.order(String(cursor.dropFirst()))
            let rows = s.pending.compactMap { (k, v) in InMemoryShard.order(k).map { ($0, k, v) } }
                .filter { (start == nil || $0.0 > start!) && s.nowMillis - $0.2.deliveredMillis >= Int64(minIdleMillis) }
                .sorted { $0.0 < $1.0 }
                .prefix(max)
                .map { ($0.1, $0.2) }
            var out: [QueueEntry] = []
            for (key, p) in rows where p.consumer != consumer {
                if let e = s.entry(key) {
                    s.pending[key] = .init(consumer: consumer, deliveries: p.deliveries, deliveredMillis: s.nowMillis)
                    out.append(QueueEntry(entryID: key, fields: e.fields, deliveries: p.deliveries))
                    out[out.count - 1].written = s.written[key] ?? 0
                } else {
                    out.append(QueueEntry(entryID: key, fields: [], deliveries: p.deliveries))
                }
            }
            let next = rows.count == max && !rows.isEmpty ? "(" + rows.last!.0 : "-"
            return .reclaimed(cursor: next, entries: out)
        case .markWritten(let add, let drop):
            for id in add { s.written[id, default: 0] += 1 }
            for id in drop { s.written[id] = nil }
            return .done
        case .promote(let now, let max):
            let due = s.delayed.filter { $0.value.due <= now }.sorted { ($0.value.due, $0.key) < ($1.value.due, $1.key) }.prefix(max)
            for (member, d) in due {
                s.add(bytes: d.fields, fast: FastLane.isFast(member))
                s.delayed[member] = nil
            }
            return .promoted(due.count)
        case .backlog:
            let lag = s.undelivered
            return .backlog(pending: s.pending.count, lag: lag)
        case .heartbeat(let json):
            s.workers[consumer] = json
            return .done
        case .dropHeartbeat:
            s.workers[consumer] = nil
            return .done
        case .controls:
            return .controls(s.campaigns)
        case .park(let entries):
            return .parked(entries.map { s.park($0, consumer: consumer) })
        case .budget(let campaign, let want):
            return .granted(s.budget(campaign, want: want))
        }
    }

    /// Up to `max` new entries of the bulk lane.
    private func readBulk(_ max: Int) -> [QueueEntry] {
        let s = shard
        var out: [QueueEntry] = []
        for e in s.stream where e.id > s.lastDelivered && out.count < max {
            s.lastDelivered = e.id
            s.pending[e.id.description] = .init(consumer: consumer, deliveries: 1, deliveredMillis: s.nowMillis)
            out.append(QueueEntry(entryID: e.id.description, fields: e.fields, deliveries: 1))
        }
        return out
    }

    /// Up to `max` new entries of the fast lane, named `f<id>`.
    private func readFast(_ max: Int) -> [QueueEntry] {
        let s = shard
        var out: [QueueEntry] = []
        for e in s.fastStream where e.id > s.lastDeliveredFast && out.count < max {
            s.lastDeliveredFast = e.id
            let id = FastLane.prefix + e.id.description
            s.pending[id] = .init(consumer: consumer, deliveries: 1, deliveredMillis: s.nowMillis)
            out.append(QueueEntry(entryID: id, fields: e.fields, deliveries: 1))
        }
        return out
    }

    /// What an entry counts against a take-back's budget (`RedisStreamScripts.takeOwn`): 1, or
    /// for a format-2 entry its bytes / 33, at most 1,000.
    static func takeBackSize(_ fields: [(name: [UInt8], value: [UInt8])]) -> Int {
        let multi = fields.contains { $0.name == Array("v".utf8) && $0.value == Array("2".utf8) }
        guard multi else { return 1 }
        let bytes = fields.reduce(0) { $0 + $1.value.count }
        return min(1000, max(1, (bytes + 32) / 33))
    }

    /// The claim of one entry (`RedisStreamScripts.claim`): guards written once, with the exact
    /// TTL the Redis buckets give.
    private func claim(_ request: ClaimRequest) -> ClaimAnswer {
        let s = shard
        let now = s.nowMillis / 1000
        let mine = request.origin ?? request.entryID
        var answer = ClaimAnswer()
        for (k, id) in request.ids.enumerated() {
            if let g = s.guards[id], now - g.at < Int64(guardTTLSeconds) {
                if g.owner != mine && g.owner != request.entryID { answer.duplicates.append(.init(position: k, owner: g.owner)) }
            } else {
                s.guards[id] = (mine, now)
            }
        }
        if request.wantProgress { answer.progress = s.progress[request.entryID] }
        return answer
    }
}
