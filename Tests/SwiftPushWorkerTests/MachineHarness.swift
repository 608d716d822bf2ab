import PushCore
@testable import SwiftPushWorker
@testable import SwiftPushWorkerMachine
@testable import SwiftPushWorkerRedis

/// A `ShardMachine` driven in memory: its queue requests go to an `InMemoryWorkQueue` (answered
/// at once, in order), its sends to a scripted APNs (`answer` decides each notification's
/// result, or nil to leave it in flight), and time moves only when the test moves it. The
/// machine is the thing under test; this is its driver, with every effect recorded.
final class MachineHarness {
    var machine: ShardMachine
    let shard: InMemoryShard
    let queue: InMemoryWorkQueue
    /// Monotonic time and wall time move together.
    var now = WorkerTime(nanos: 1_000_000_000, wallMillis: 1_700_000_000_000)
    /// What APNs answers for a notification (nil: no answer yet; it stays in flight).
    var answer: (SendItem) -> NoteResult? = { NoteResult(tag: $0.tag, kind: .accepted, status: 200, reason: .none) }
    /// Notifications sent and not answered, by tag.
    var inFlight: [UInt64: SendItem] = [:]
    /// Every send, as (apns-id) text, in order (a resend appears again).
    var sends: [String] = []
    /// The entry of every send, in order (`sends`' entries).
    var sentEntries: [String] = []
    /// The wall clock at the last send.
    var lastSendWallMillis: Int64 = 0
    var logs: [WorkerLogLine] = []
    var stopped: Int?
    var fatal: String?
    /// Whether the clients were closed (a stop past its drain time).
    var clientsClosed = false
    /// Every queue request the machine made, in order.
    var requests: [QueueRequest] = []
    /// The connection each of `requests` went on.
    var requestLanes: [WorkerAction.Lane] = []
    /// How long a settle takes to be answered (0: at once, as every other request); with more,
    /// a settle stays in flight that long, as on a real connection, while the rest goes on.
    var settleMillis = 0
    /// Settles in flight (`settleMillis`), with when each is answered.
    private var settlesInFlight: [(id: Int, request: QueueRequest, dueNanos: UInt64)] = []
    /// Main-connection requests behind a read that waits in Redis (`blockMillis` > 0 and
    /// nothing to read), in order: the read is answered once an entry is added or its wait is
    /// over, and what was sent behind it only then, as Redis answers a connection in order.
    private var mainWaiting: [(id: Int, request: QueueRequest, dueNanos: UInt64)] = []
    /// The same for the fast lane's own connection (`WorkerAction.Lane.fast`): its read waits
    /// for a fast-lane entry, and the claims sent behind it wait for it.
    private var fastWaiting: [(id: Int, request: QueueRequest, dueNanos: UInt64)] = []
    /// Whether the client writes what it is given at once (and says so: `WorkerEvent.written`,
    /// one tag per entry as the client reports them); false: APNs cannot be reached, nothing
    /// is written.
    var writes = true

    init(shard: InMemoryShard = InMemoryShard(), consumer: String = "w1", settings: MachineSettings = MachineHarness.settings(),
         minIdleMillis: Int = 60_000) {
        self.shard = shard
        queue = InMemoryWorkQueue(shard: shard, consumer: consumer, minIdleMillis: minIdleMillis)
        machine = ShardMachine(settings: settings, apps: ["demo": AppPolicy(topics: ["com.example.app"])])
        now.wallMillis = shard.nowMillis
    }

    static func settings(_ change: (inout MachineSettings) -> Void = { _ in }) -> MachineSettings {
        var s = MachineSettings()
        s.maxInFlight = 2000
        s.batch = 100
        s.blockMillis = 0
        // No fast-lane reserve unless a test sets one (FastLaneTests): the others hold the
        // bulk lane to the whole of max_in_flight.
        s.fastReserve = 0
        change(&s)
        return s
    }

    /// Hands `event` to the machine and carries out what it asks, and what that causes, at once
    /// (with the replies of requests in flight that are due: a waiting read that has an entry,
    /// a settle whose time has come).
    func handle(_ event: WorkerEvent) {
        var events = [event]
        while !events.isEmpty {
            let e = events.removeFirst()
            for action in machine.handle(e, at: now) { events += perform(action) }
            if events.isEmpty { events = dueReplies() }
        }
    }

    /// Whether a read waits for `mainWaiting`'s turn: one of `blockMillis` with nothing to read.
    private var nothingToRead: Bool { shard.undelivered == 0 }

    /// The replies of requests in flight that are due now.
    private func dueReplies() -> [WorkerEvent] {
        var events: [WorkerEvent] = []
        while let first = settlesInFlight.first, first.dueNanos <= now.nanos {
            settlesInFlight.removeFirst()
            events += reply(first.id, first.request)
        }
        while let first = mainWaiting.first {
            if case .read = first.request, nothingToRead, now.nanos < first.dueNanos { break }
            mainWaiting.removeFirst()
            events += reply(first.id, first.request)
        }
        while let first = fastWaiting.first {
            if case .readFast = first.request, shard.undeliveredFast == 0, now.nanos < first.dueNanos { break }
            fastWaiting.removeFirst()
            events += reply(first.id, first.request)
        }
        return events
    }

    /// `request` performed by the queue, and its reply.
    private func reply(_ id: Int, _ request: QueueRequest) -> [WorkerEvent] {
        do throws(QueueError) {
            return [.replied(id: id, try queue.perform(request))]
        } catch {
            return [error.connectionLost ? .connectionLost(error) : .failed(id: id, error)]
        }
    }

    private func perform(_ action: WorkerAction) -> [WorkerEvent] {
        switch action {
        case .connect:
            // A new connection: what was in flight on the old one is gone with it.
            settlesInFlight.removeAll()
            mainWaiting.removeAll()
            fastWaiting.removeAll()
            do throws(QueueError) {
                try queue.open()
                return [.connected]
            } catch {
                return [.connectFailed(error)]
            }
        case .request(let id, let request, let lane):
            requests.append(request)
            requestLanes.append(lane)
            if lane == .settle && settleMillis > 0 {
                settlesInFlight.append((id, request, now.nanos + UInt64(settleMillis) * 1_000_000))
                return []
            }
            if lane == .main, case .read(_, let block) = request, block > 0, nothingToRead, queue.faults.isEmpty {
                mainWaiting.append((id, request, now.nanos + UInt64(block) * 1_000_000))
                return []
            }
            if lane == .main && !mainWaiting.isEmpty {
                mainWaiting.append((id, request, 0))
                return []
            }
            if lane == .fast, case .readFast(_, let block) = request, block > 0, shard.undeliveredFast == 0, queue.faults.isEmpty {
                fastWaiting.append((id, request, now.nanos + UInt64(block) * 1_000_000))
                return []
            }
            if lane == .fast && !fastWaiting.isEmpty {
                fastWaiting.append((id, request, 0))
                return []
            }
            return reply(id, request)
        case .send(let app, let items):
            var report = SubmitReport()
            for item in items {
                inFlight[item.tag] = item
                sends.append(item.note.apnsID.description)
                sentEntries.append(item.entry.entry.entryID)
                lastSendWallMillis = now.wallMillis
                report.taken.append(item.tag)
            }
            guard writes else { return [.submitted(app: app, report)] }
            var started: [UInt64] = []
            for tag in report.taken where started.last.map({ $0 >> 10 != tag >> 10 }) ?? true { started.append(tag) }
            return [.submitted(app: app, report), .written(started)]
        case .closeClients:
            clientsClosed = true
            let cancelled = inFlight.keys.sorted().map { NoteResult(tag: $0, kind: .failed, status: 0, reason: .cancelledInFlight) }
            inFlight.removeAll()
            return cancelled.isEmpty ? [] : [.results(cancelled)]
        case .log(let line):
            logs.append(line)
        case .stopped(let left):
            stopped = left
        case .fatal(let message):
            fatal = message
        case .apnsEvent, .recorded:
            break
        }
        return []
    }

    /// APNs answers what `answer` says for every notification in flight.
    func answerInFlight() {
        let results = inFlight.keys.sorted().compactMap { tag -> NoteResult? in
            guard let r = answer(inFlight[tag]!) else { return nil }
            inFlight[tag] = nil
            return r
        }
        if !results.isEmpty { handle(.results(results)) }
    }

    /// Moves both clocks (the shard's too) by `millis`.
    func advance(millis: Int) {
        now = now.adding(millis: millis)
        shard.nowMillis = now.wallMillis
    }

    /// Runs the machine (answering, ticking, `stepMillis` apart) until `done` or `limitMillis`
    /// of its time have passed; returns whether `done` became true.
    @discardableResult
    func run(stepMillis: Int = 10, limitMillis: Int = 60_000, until done: () -> Bool) -> Bool {
        var spent = 0
        while !done() {
            if spent >= limitMillis { return false }
            handle(.tick)
            answerInFlight()
            advance(millis: stepMillis)
            spent += stepMillis
        }
        return true
    }

    /// Runs until a written delivery of this life is recorded in the queue (`written:{s}`), with
    /// nothing answered meanwhile unless `answer` says so: a life then killed died after its
    /// write was recorded. Returns whether it was.
    @discardableResult
    func runUntilWriteRecorded(limitMillis: Int = 5000) -> Bool {
        let before = shard.written.values.reduce(0, +)
        return run(limitMillis: limitMillis) { self.shard.written.values.reduce(0, +) > before }
    }

    /// Every outcome row recorded so far (all formats).
    func rows() throws -> [OutcomeRow] {
        var out: [OutcomeRow] = []
        for o in shard.outcomes { out += try OutcomeRow.rows(streamID: o.id, fields: o.fields) }
        return out
    }

    /// Notifications with an outcome, by (id, token), counting a group's members.
    func outcomesByNotification() throws -> [String: Int] {
        var by: [String: Int] = [:]
        for r in try rows() {
            if r.count > 1 || r.indexes != nil {
                for i in IndexRanges.indexes(r.indexes ?? "") ?? [] { by["\(r.entry)#\(i)", default: 0] += 1 }
            } else {
                by["\(r.entry)#\(r.index ?? 0)", default: 0] += 1
            }
        }
        return by
    }
}

/// Stream entry fields for tests.
enum Entries {
    static func token(_ i: Int) -> String { String(format: "%064x", i + 1) }
    static let payload = #"{"aps":{"alert":"hi"}}"#

    static func single(_ id: String, token: String = token(0), _ extra: [(String, String)] = []) -> [(String, String)] {
        [("id", id), ("app", "demo"), ("token", token), ("payload", payload)] + extra
    }

    static func multicast(_ id: String, tokens: [String], _ extra: [(String, String)] = []) -> [(String, String)] {
        [("v", "2"), ("id", id), ("app", "demo"), ("tokens", tokens.joined(separator: ",")), ("payload", payload)] + extra
    }

    /// A multicast entry with its tokens packed (`tokens_bin`), as the producers write them.
    static func packedMulticast(_ id: String, tokens: [String]) -> [(name: [UInt8], value: [UInt8])] {
        [("v", "2"), ("id", id), ("app", "demo"), ("payload", payload)].map { (Array($0.0.utf8), Array($0.1.utf8)) }
            + [(Array("tokens_bin".utf8), PackedTokens.pack(tokens)!)]
    }
}
