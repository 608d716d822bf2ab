import Foundation
import Testing
import CSwiftPushABI
import PushCore
@testable import APNsMock
@testable import PushClientCore

/// Chaos (issue #8, item 1): many notifications through one client against the mock while its
/// faults change all the time — GOAWAYs, REFUSED_STREAMs, stream-limit drops, stalls,
/// 429/500/503 answers, abrupt connection kills, slow answers — and the server is stopped and
/// restarted on the same port mid-run. Afterwards the client's results and the mock's record
/// are reconciled:
///
/// - every notification has exactly one result;
/// - an ACCEPTED notification was answered 200 exactly once, and never stalled;
/// - a REJECTED one was answered with its status and never 200;
/// - a FAILED one whose reason says it never reached APNs (QueueTimeout, Cancelled, ...) was
///   never answered 200 nor left stalled;
/// - a notification "delivered" (answered 200, or stalled: the server has it) more than once
///   must have a result-unknown outcome (Timeout, ConnectionLost, CancelledInFlight,
///   ProtocolError); those are counted and bounded (the library never resends such a
///   notification, so the bound it must meet is zero-ish);
/// - nothing was processed that no notification of ours explains, and the record lost nothing.
///
/// `SWIFTPUSH_CHAOS_COUNT` sets the number of notifications (default 50,000: CI, a few seconds
/// in release, well under a minute in debug); `Tests/chaos/run.sh COUNT` runs the long version
/// in release mode. `SWIFTPUSH_CHAOS_SEED` repeats a run's fault schedule.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct ChaosTests {
    let support = ClientTestSupport()

    @Test("Chaos: changing faults and a server restart; every notification has exactly one outcome, reconciled with the mock's record")
    func chaos() throws {
        let env = ProcessInfo.processInfo.environment
        let count = max(1000, env["SWIFTPUSH_CHAOS_COUNT"].flatMap { Int($0) } ?? 50_000)
        let seed = env["SWIFTPUSH_CHAOS_SEED"].flatMap { UInt64($0) } ?? 0x5EED_C4A0_5001
        var run = ChaosRun(count: count, seed: seed, support: support)
        try run.execute()
        run.reconcile()
    }
}

/// A 128-bit apns-id (UUID without dashes), so that a million of them fit in a dictionary
/// without a String each.
struct ApnsKey: Hashable {
    var hi: UInt64
    var lo: UInt64

    /// Parses 36 bytes "xxxxxxxx-xxxx-...": hex digits, dashes skipped. Nil if malformed.
    init?<C: Collection>(_ bytes: C) where C.Element == UInt8 {
        var hi: UInt64 = 0, lo: UInt64 = 0, digits = 0
        for b in bytes {
            if b == UInt8(ascii: "-") { continue }
            let v: UInt8
            switch b {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): v = b - 48
            case UInt8(ascii: "a")...UInt8(ascii: "f"): v = b - 87
            case UInt8(ascii: "A")...UInt8(ascii: "F"): v = b - 55
            default: return nil
            }
            if digits < 16 { hi = hi << 4 | UInt64(v) } else { lo = lo << 4 | UInt64(v) }
            digits += 1
        }
        guard digits == 32 else { return nil }
        self.hi = hi
        self.lo = lo
    }
}

/// The mock's record reduced to what reconciliation needs, per apns-id.
struct RecordTally {
    var ok: Int32 = 0       // answered 200
    var stalled: Int32 = 0  // processed, never answered (the server has it)
    var other: Int32 = 0    // answered with an error status
    var lastErrorStatus: Int32 = 0
    var delivered: Int32 { ok + stalled }
}

/// One result, compactly.
struct CompactResult {
    var key: ApnsKey
    var outcome: Int8
    var status: Int16
    var reason: Int32
    var attempts: UInt32
}

/// The fault schedule's and token choice's draws, from the mock's seeded SplitMix64.
struct ChaosRandom {
    private var generator: SplitMix64
    init(state: UInt64) { generator = SplitMix64(seed: state) }
    mutating func next() -> UInt64 { generator.next() }
    mutating func unit() -> Double { generator.nextUnit() }
    mutating func chance(_ p: Double) -> Bool { unit() < p }
    mutating func int(_ r: ClosedRange<Int>) -> Int { r.lowerBound + Int(next() % UInt64(r.count)) }
}

struct ChaosRun {
    let count: Int
    let seed: UInt64
    let support: ClientTestSupport

    /// Per-notification deadline: stalls and lost connections end within it, so a phase never
    /// waits longer than this (plus reconnects). `SWIFTPUSH_CHAOS_DEADLINE_MS` (default 1500;
    /// longer under ThreadSanitizer, where everything is ten times slower).
    let deadlineMillis: Int
    /// Most notifications outstanding (sent, result not yet polled): `SWIFTPUSH_CHAOS_WINDOW`
    /// (default 6000).
    let window: Int
    static let maxStreams = 1000

    // Device tokens: most are fine, one is unregistered (410), one always busy (429).
    static let goodTokens: [String] = (0..<8).map { i in
        String(repeating: String(format: "%02x", 0x10 + i), count: 32)
    }
    static let goneToken = "aa" + String(repeating: "0e", count: 31)
    static let busyToken = "bb" + String(repeating: "0b", count: 31)
    static let goneTimestamp: Int64 = 1_700_000_000_777

    var random: ChaosRandom
    var results: [CompactResult?]
    var resultCount = 0
    var duplicateResults = 0
    var tally: [ApnsKey: RecordTally] = [:]
    var recordsSeen = 0
    var restarts = 0
    var faultSets = 0
    var phases = 0
    var seconds = 0.0
    var clientStats = push_stats()
    var serverStats = MockStats()
    var fatal: String?

    init(count: Int, seed: UInt64, support: ClientTestSupport) {
        self.count = count
        self.seed = seed
        self.support = support
        let env = ProcessInfo.processInfo.environment
        deadlineMillis = max(100, env["SWIFTPUSH_CHAOS_DEADLINE_MS"].flatMap { Int($0) } ?? 1500)
        window = max(100, env["SWIFTPUSH_CHAOS_WINDOW"].flatMap { Int($0) } ?? 6000)
        random = ChaosRandom(state: seed)
        results = Array(repeating: nil, count: count)
    }

    /// A fresh fault mix. Every-Nth values and rates are drawn per phase; the token faults are
    /// always on (they only hit the two special tokens).
    mutating func drawFaults() -> MockFaults {
        var f = MockFaults()
        f.seed = random.next()
        f.unregisteredTokens = [Self.goneToken: Self.goneTimestamp]
        f.tooManyRequestsTokens = [Self.busyToken]
        if random.chance(0.1) { return f } // a calm spell now and then
        if random.chance(0.6) {
            f.goawayAfterRequests = random.int(300...8000)
            f.goawayReason = ["Shutdown", "MaintenanceWindow", "Idle"][random.int(0...2)]
        }
        if random.chance(0.5) { f.refuseEveryNthStream = random.int(15...500) }
        if random.chance(0.3) { f.dropLimitToOneAfterRejection = true }
        if random.chance(0.5) { f.status500EveryNth = random.int(40...1000) }
        if random.chance(0.5) { f.status503EveryNth = random.int(40...1000) }
        if random.chance(0.4) { f.status500Rate = random.unit() * 0.01 }
        if random.chance(0.4) { f.status503Rate = random.unit() * 0.01 }
        if random.chance(0.4) { f.stallEveryNth = random.int(800...10_000) }
        if random.chance(0.3) { f.killConnectionAfterRequests = random.int(200...6000) }
        if random.chance(0.1) { f.responseDelayMillis = random.int(1...15) }
        return f
    }

    mutating func execute() throws {
        // A port of our own, then a server bound to it explicitly, so that a restart of the
        // same server object (same record, same counters) comes back where the client expects.
        let probe = try support.startMock()
        let port = probe.port
        probe.stop()
        let server = try support.startMock(maxStreams: Self.maxStreams, port: port) {
            $0.recordRequests = true
            // Drained after every phase; the limit only guards against a runaway.
            $0.recordLimit = 2_000_000
        }
        defer { server.stop() }
        let client = try support.makeClient(port: port, connections: 2) {
            $0.timing.deadlineMillis = deadlineMillis
            $0.recovery.retryDelayMillis = 10
            $0.recovery.maxAttempts = 4
            $0.pool.queueCapacity = window + 1000
            $0.timing.connectTimeoutMillis = 2000
        }
        defer { client.close(drainMillis: 0) }

        // C strings for the tokens and payload, alive for the whole run.
        let tokens = (Self.goodTokens + [Self.goneToken, Self.busyToken]).map { strdup($0)! }
        let payload = strdup(ClientTestSupport.payload)!
        defer { tokens.forEach { free($0) }; free(payload) }

        let phaseSize = max(5000, count / 50)
        let phaseCount = (count + phaseSize - 1) / phaseSize
        // At least one restart; two on longer runs.
        var restartPhases: Set<Int> = [phaseCount / 3]
        if phaseCount >= 6 { restartPhases.insert(2 * phaseCount / 3) }

        let start = MonotonicTime.nanos()
        var batch = [push_notification](repeating: push_notification(), count: 500)
        var page = [push_result](repeating: push_result(), count: 1000)
        var nextTag = 0
        for phase in 0..<phaseCount {
            phases += 1
            let phaseEnd = min(count, nextTag + phaseSize)
            let changeAt = nextTag + (phaseEnd - nextTag) / 2
            var changed = false
            server.setFaults(drawFaults())
            faultSets += 1
            var lastProgress = MonotonicTime.nanos()
            // Every earlier notification has its result, so this phase's results are those
            // beyond its first tag.
            let phaseStart = nextTag
            let phaseTotal = phaseEnd - phaseStart
            while resultCount - phaseStart < phaseTotal {
                // Mid-phase, with traffic in flight: a new fault mix, or a server restart.
                if !changed && nextTag >= changeAt {
                    changed = true
                    if restartPhases.contains(phase) {
                        server.stop()
                        // The outage itself: the server is down for a random real time (the
                        // fault being injected), not a wait for something.
                        usleep(UInt32(random.int(50...400)) * 1000)
                        var started = false
                        for _ in 0..<50 where !started {
                            // The old listener's port is free once the kernel lets go of it: no event to wait on.
                            do { try server.start(); started = true } catch { usleep(20_000) }
                        }
                        guard started else { fatal = "the mock could not be restarted on port \(port)"; return }
                        restarts += 1
                    }
                    server.setFaults(drawFaults())
                    faultSets += 1
                }
                let outstanding = nextTag - resultCount
                if nextTag < phaseEnd && outstanding < window {
                    let n = min(batch.count, phaseEnd - nextTag, window - outstanding)
                    for i in 0..<n {
                        var tokenRandom = ChaosRandom(state: seed ^ UInt64(nextTag + i))
                        let pick = Int(tokenRandom.next() % 200)
                        // 1% gone (410), 0.5% busy (429), the rest spread over the good tokens.
                        let t = pick < 2 ? 8 : pick < 3 ? 9 : pick % 8
                        batch[i] = push_notification()
                        batch[i].device_token = UnsafePointer(tokens[t])
                        batch[i].payload = UnsafePointer(payload)
                        batch[i].tag = UInt64(nextTag + i)
                    }
                    let sent = batch.withUnsafeBufferPointer { client.send($0.baseAddress!, count: n, timeoutMillis: 0) }
                    if let e = sent.error, e.status != .queueFull {
                        fatal = "send failed: \(e.description)"
                        return
                    }
                    nextTag += sent.accepted
                }
                let wait: Int32 = (nextTag == phaseEnd || nextTag - resultCount >= window) ? 50 : 0
                let got = page.withUnsafeMutableBytes {
                    client.poll(into: $0.baseAddress!, max: 1000, recordSize: MemoryLayout<push_result>.stride,
                                timeoutMillis: wait).count
                }
                for i in 0..<got { take(page[i]) }
                let now = MonotonicTime.nanos()
                if got > 0 { lastProgress = now }
                if now - lastProgress > 20_000_000_000 {
                    fatal = "no result for 20 s in phase \(phase) with \(nextTag - resultCount) outstanding: results went missing"
                    return
                }
            }
            // Quiescent: every notification sent so far has its result. Let anything the
            // server is still reading settle, then move the record into the tally.
            usleep(20_000)
            drainRecord(server)
        }
        seconds = Double(MonotonicTime.nanos() - start) / 1e9
        // Nothing more may come: close, and make sure no result appears after the last one.
        client.close(drainMillis: 0)
        let late = page.withUnsafeMutableBytes {
            client.poll(into: $0.baseAddress!, max: 1000, recordSize: MemoryLayout<push_result>.stride, timeoutMillis: 0)
        }
        for i in 0..<late.count { take(page[i]) }
        // As at each quiescent point above: what the server is still reading has no event to
        // wait on; the record is drained after a short settle.
        usleep(20_000)
        drainRecord(server)
        clientStats = client.stats()
        serverStats = server.stats()
    }

    mutating func take(_ r: push_result) {
        var copy = r.apns_id
        let key = withUnsafeBytes(of: &copy) { ApnsKey($0.prefix(36)) }
        let tag = Int(r.tag)
        guard tag >= 0, tag < count, let key else {
            duplicateResults += 1 // an unknown tag or a malformed id: counted as a violation
            return
        }
        if results[tag] != nil {
            duplicateResults += 1
            return
        }
        results[tag] = CompactResult(key: key, outcome: Int8(r.outcome), status: Int16(r.status), reason: r.reason, attempts: r.attempts)
        resultCount += 1
    }

    mutating func drainRecord(_ server: MockServer) {
        let records = server.record()
        server.resetRecord()
        recordsSeen += records.count
        for rec in records {
            guard let key = ApnsKey(rec.apnsId.utf8) else { continue }
            var t = tally[key] ?? RecordTally()
            switch rec.status {
            case 200: t.ok += 1
            case 0: t.stalled += 1
            default:
                t.other += 1
                t.lastErrorStatus = Int32(rec.status)
            }
            tally[key] = t
        }
    }

    func reconcile() {
        if let fatal {
            Issue.record(Comment(rawValue: fatal))
            return
        }
        var accepted = 0, rejected = 0, failed = 0
        var byReason: [String: Int] = [:]
        var rejectedByStatus: [Int: Int] = [:]
        var unknowns = 0, unknownDelivered = 0, duplicates = 0
        var timeoutsWithoutStall = 0
        var violations: [String] = []
        var matched = Set<ApnsKey>()
        matched.reserveCapacity(count)
        var missing = 0
        func violation(_ s: String) { if violations.count < 20 { violations.append(s) } }
        var violationCount = 0

        for tag in 0..<count {
            guard let r = results[tag] else { missing += 1; continue }
            if !matched.insert(r.key).inserted {
                violationCount += 1
                violation("tag \(tag): apns-id shared with another notification")
            }
            let t = tally[r.key] ?? RecordTally()
            let reason = APNsReason(rawValue: r.reason) ?? .unknown
            let unknown = reason.retryClass == .unknown
            if t.delivered > 1 {
                duplicates += 1
                if !unknown {
                    violationCount += 1
                    violation("tag \(tag): delivered \(t.delivered) times (200: \(t.ok), stalled: \(t.stalled)) but its outcome \(r.outcome) \(reason.text) is not result-unknown")
                }
            }
            switch r.outcome {
            case 1:
                accepted += 1
                if t.ok != 1 || t.stalled != 0 {
                    violationCount += 1
                    violation("tag \(tag): ACCEPTED but answered 200 \(t.ok) times, stalled \(t.stalled)")
                }
            case 2:
                rejected += 1
                rejectedByStatus[Int(r.status), default: 0] += 1
                if t.ok != 0 || t.stalled != 0 || t.other == 0 {
                    violationCount += 1
                    violation("tag \(tag): REJECTED \(r.status) \(reason.text) but the record says 200×\(t.ok) stalled×\(t.stalled) errors×\(t.other)")
                }
            case 3:
                failed += 1
                byReason[reason.text, default: 0] += 1
                if unknown {
                    unknowns += 1
                    if t.delivered > 0 { unknownDelivered += 1 }
                    if reason == .timeout && t.stalled == 0 { timeoutsWithoutStall += 1 }
                } else if t.delivered != 0 {
                    violationCount += 1
                    violation("tag \(tag): FAILED \(reason.text) (never sent) but the server has it: 200×\(t.ok) stalled×\(t.stalled)")
                }
            default:
                violationCount += 1
                violation("tag \(tag): outcome \(r.outcome)")
            }
        }
        let phantoms = tally.keys.filter { !matched.contains($0) }.count

        let rejectedText = rejectedByStatus.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value)" }.joined(separator: ",")
        let failedText = byReason.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value)" }.joined(separator: ",")
        print("""
            chaos-result notifications=\(count) accepted=\(accepted) rejected=\(rejected) [\(rejectedText)] \
            failed=\(failed) [\(failedText)] unknowns=\(unknowns) unknown_delivered=\(unknownDelivered) \
            duplicates=\(duplicates) timeouts_without_stall=\(timeoutsWithoutStall) missing=\(missing) \
            extra_results=\(duplicateResults) phantom_records=\(phantoms) violations=\(violationCount) \
            seconds=\(String(format: "%.1f", seconds)) rate=\(String(format: "%.0f", Double(count) / max(seconds, 0.001)))/s \
            seed=\(seed) phases=\(phases) fault_sets=\(faultSets) restarts=\(restarts) \
            deadline_ms=\(deadlineMillis) window=\(window)
            chaos-client sent=\(clientStats.sent) retries=\(clientStats.retries) goaways=\(clientStats.goaways) \
            connections_started=\(clientStats.connections_started)
            chaos-server records=\(recordsSeen) \(serverStats.description) records_dropped=\(serverStats.recordsDropped)
            """)
        for v in violations { print("chaos-violation " + v) }

        #expect(missing == 0, "every notification has a result")
        #expect(duplicateResults == 0, "no notification has two results")
        #expect(violationCount == 0, "results agree with the mock's record: \(violations.first ?? "")")
        #expect(phantoms == 0, "every processed request belongs to one of our notifications")
        #expect(serverStats.recordsDropped == 0)
        #expect(recordsSeen == serverStats.requests + serverStats.stalledRequests, "the record lost nothing")
        #expect(serverStats.accepted == tally.values.reduce(0) { $0 + Int($1.ok) }, "the record's 200s match the server's count")
        #expect(Int(clientStats.accepted) == accepted && Int(clientStats.rejected) == rejected && Int(clientStats.failed) == failed,
                "the client's counters agree with its results")
        // The library never resends a notification whose result is unknown, so a double
        // delivery is a bug; the bound leaves room only for what the outcome already admits.
        #expect(duplicates <= max(5, count / 10_000), "duplicates bounded")
        // Every result-unknown outcome is explained by a fault: a stall (Timeout) or a
        // connection that died with streams open (kills, the restarts, GOAWAY drains).
        #expect(timeoutsWithoutStall <= max(50, count / 100), "timeouts come from stalls (else the machine is too slow for the deadline)")
        let connectionLost = byReason[APNsReason.connectionLost.text] ?? 0
        let lossEvents = serverStats.killedConnections + 4 * restarts
        #expect(connectionLost <= lossEvents * Self.maxStreams,
                "ConnectionLost (\(connectionLost)) only for streams open on killed connections (\(lossEvents) events × \(Self.maxStreams) streams)")
        #expect(restarts >= 1, "the server was restarted mid-run")
        #expect(accepted > count / 2, "most notifications got through")
    }
}
