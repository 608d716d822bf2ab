import PushCore
import Testing
@testable import PushClientCore
@testable import PushClientMachine

/// The reconnect back-off as a value the core owns (issue 34): the core decides with its
/// `ReconnectBackoff` and reports each change as an action (`.backoff`) for the client's shared
/// schedule; every random draw comes from the one `CoreRandom` it is given. In memory, with a
/// seeded source, so every run draws the same.
@Suite("ClientCore: the reconnect back-off as a value, one seeded random source")
struct ClientCoreBackoffTests {
    static let refused = TransportError(.connect, "Connection refused")

    /// A core of `connections` positions whose draws come from `seed`.
    static func harness(connections: Int, seed: UInt64) -> CoreHarness {
        var c = ClientConfiguration()
        c.pool.connections = connections
        c.recovery.unreachableAfterMillis = 0
        return CoreHarness(configuration: c, random: CoreRandom(seed: seed))
    }

    /// The back-off steps among `actions`.
    static func steps(_ actions: [ClientCore.Action]) -> [BackoffStep] {
        actions.compactMap { if case .backoff(let step) = $0 { return step } else { return nil } }
    }

    /// The actions of opening what the pool allows at `h.now` (the name answered at once), the
    /// resolution's own left out.
    static func attempt(_ h: inout CoreHarness) -> [ClientCore.Action] {
        var all: [ClientCore.Action] = []
        for _ in 0..<2 {
            h.maintainPool(callersWaiting: true)
            for action in h.takeActions() {
                guard case .resolve = action else { all.append(action); continue }
                h.core.resolutionStarted(ticket: 1)
                h.core.resolutionAnswered(ticket: 1, .success([CoreHarness.address]), now: h.now, actions: &h.actions)
            }
        }
        return all
    }

    /// Two positions refused together, then a probe refused after the delay: the steps the core
    /// reports, with the time each was carried out at.
    static func refusals(_ h: inout CoreHarness) -> [(BackoffStep, UInt64)] {
        var seen: [(BackoffStep, UInt64)] = []
        for id in h.startConnections() { h.core.connectFailed(id, error: refused, now: h.now, actions: &h.actions) }
        seen += steps(h.takeActions()).map { ($0, h.now) }
        h.waitOutBackoff()
        let probe = attempt(&h)
        seen += steps(probe).map { ($0, h.now) }
        h.advance(millis: 10)
        for case .connect(let id, _) in probe { h.core.connectFailed(id, error: refused, now: h.now, actions: &h.actions) }
        seen += steps(h.takeActions()).map { ($0, h.now) }
        return seen
    }

    @Test("Each change of the core's back-off is an action; applied in order to the client's schedule they leave it equal to the core's value")
    func stepsMirrorTheCoreValue() {
        var h = Self.harness(connections: 2, seed: 7)
        let seen = Self.refusals(&h)
        // Two refusals of one episode count once, then the probe and its failure.
        #expect(seen.map(\.0).map { if case .failed = $0 { "failed" } else if case .probeStarted = $0 { "probe" } else { "other" } }
                == ["failed", "probe", "failed"])
        #expect(h.core.backoff.failures == 2)
        var schedule = ReconnectBackoff()
        for (step, at) in seen {
            let allowed = schedule.apply(step, now: at)
            #expect(allowed, "a schedule that saw every step allows the probe")
        }
        #expect(schedule == h.core.backoff)
    }

    @Test("The reconnect jitter is the seeded source's draw: the same seed, the same delays; another seed, others")
    func seededJitter() {
        var a = Self.harness(connections: 2, seed: 7), b = Self.harness(connections: 2, seed: 7), c = Self.harness(connections: 2, seed: 8)
        let sa = Self.refusals(&a), sb = Self.refusals(&b)
        _ = Self.refusals(&c) // c's delays, compared below
        #expect(sa.map(\.0) == sb.map(\.0))
        #expect(a.core.backoff.nextAttemptNanos == b.core.backoff.nextAttemptNanos)
        var draws = CoreRandom(seed: 7)
        guard case .failed(_, _, let unit) = sa.first?.0 else { Issue.record("no failure reported"); return }
        let first = draws.unit()
        #expect(unit == first, "the first failure's jitter is the source's first draw")
        #expect(a.core.backoff.nextAttemptNanos != c.core.backoff.nextAttemptNanos)
    }

    @Test("A probe the shared schedule refuses (another thread holds it) is dropped before it starts and counts as nothing; the shared value then rules")
    func refusedProbe() {
        var h = Self.harness(connections: 1, seed: 3)
        for id in h.startConnections() { h.core.connectFailed(id, error: Self.refused, now: h.now, actions: &h.actions) }
        _ = h.takeActions()
        h.waitOutBackoff()
        // The group's schedule: another thread took the probe a moment ago.
        var shared = h.core.backoff
        let taken = shared.beginAttempt(now: h.now, mayProbe: true)
        #expect(taken == .probe)
        let actions = Self.attempt(&h)
        guard case .backoff(.probeStarted(let id)) = actions.first, case .connect(id, _)? = actions.dropFirst().first else {
            Issue.record("expected the probe's claim before its connect: \(actions)")
            return
        }
        let allowed = shared.apply(.probeStarted(id), now: h.now)
        #expect(!allowed)
        h.core.probeRefused(id)
        #expect(!h.core.holds(id) && h.core.pool.hasEmptyPosition, "dropped, its position free")
        #expect(h.core.backoff.failures == 1 && h.core.lastConnectionError?.description == Self.refused.description,
                "the refusal is no failure")
        // The other thread's probe fails: adopting the shared value, this core waits for its delay.
        h.advance(millis: 5)
        shared.failed(now: h.now, attemptStartedNanos: h.now - 5 * CoreHarness.ms, unit: 0.5)
        h.core.adoptBackoff(shared)
        #expect(h.core.backoff == shared)
        #expect(Self.attempt(&h).isEmpty, "no attempt before the shared delay is over")
        h.now = shared.nextAttemptNanos
        #expect(Self.steps(Self.attempt(&h)).count == 1, "then one probe again")
    }

    @Test("apns-ids come from the same seeded source: two cores of one seed name their notifications alike")
    func seededApnsIDs() {
        func ids(seed: UInt64) -> [String] {
            var h = Self.harness(connections: 1, seed: seed)
            for id in h.startConnections() { h.establish(id, maxStreams: 10) }
            let sent = h.submit(2)
            _ = h.dispatch()
            return sent.map { i in
                let p = UnsafeRawBufferPointer(start: h.slots[i].pointee.storage.buffer! + SlotLayout.apnsId, count: 36)
                return String(decoding: p, as: UTF8.self)
            }
        }
        let a = ids(seed: 11)
        #expect(a == ids(seed: 11))
        #expect(a != ids(seed: 12))
        #expect(a.allSatisfy { $0.count == 36 && $0.dropFirst(14).first == "4" }, "version 4: \(a)")
    }
}
