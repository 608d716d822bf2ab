import Testing
import PushCore

/// The self-sizing pool's rule, with made-up observations and times.
@Suite("Pool sizing", .timeLimit(.minutes(1)))
struct PoolSizingTests {
    typealias O = PoolSizing.Observation
    let second: UInt64 = 1_000_000_000

    /// `ready` connections of 100 streams, all busy, with `queued` waiting.
    func saturated(_ ready: Int, queued: Int = 50, opening: Int = 0) -> O {
        O(ready: ready, opening: opening, freeStreams: 0, streamsPerConnection: 100, queued: queued, inFlight: ready * 100)
    }

    @Test("Starts at the minimum, clamped to 1...maximum")
    func bounds() {
        #expect(PoolSizing(minimum: 2, maximum: 8).target == 2)
        #expect(PoolSizing(minimum: 0, maximum: 8).target == 1)
        #expect(PoolSizing(minimum: 12, maximum: 8).target == 8)
    }

    @Test("Grows by one while every stream is busy and notifications wait, one connection at a time, up to the maximum")
    func grows() {
        var p = PoolSizing(minimum: 1, maximum: 3)
        #expect(p.observe(saturated(1), now: 0) == .grow)
        #expect(p.target == 2)
        // The new connection is still opening: no second growth on the same evidence.
        #expect(p.observe(saturated(1, opening: 1), now: 1) == .keep)
        #expect(p.observe(saturated(2), now: 2) == .grow)
        #expect(p.target == 3)
        #expect(p.observe(saturated(3), now: 3) == .keep, "at the maximum")
        #expect(p.target == 3)
    }

    @Test("Does not grow with free streams, with nothing queued, or while a position below the target is empty")
    func staysWhenNotTheLimit() {
        var p = PoolSizing(minimum: 1, maximum: 4)
        #expect(p.observe(O(ready: 1, opening: 0, freeStreams: 1, streamsPerConnection: 100, queued: 500, inFlight: 99), now: 0) == .keep)
        #expect(p.observe(O(ready: 1, opening: 0, freeStreams: 0, streamsPerConnection: 100, queued: 0, inFlight: 100), now: 1) == .keep)
        // A connection that dropped and reconnects (ready below the target) is not a reason to grow.
        #expect(p.observe(O(ready: 0, opening: 1, freeStreams: 0, streamsPerConnection: 100, queued: 50, inFlight: 0), now: 2) == .keep)
        #expect(p.target == 1)
    }

    @Test("Shrinks by one after a whole window of demand at or below half of what one connection fewer carries")
    func shrinks() {
        var p = PoolSizing(minimum: 1, maximum: 4, shrinkWindowNanos: 60 * second)
        #expect(p.observe(saturated(1), now: 0) == .grow)
        #expect(p.observe(saturated(2), now: 1) == .grow)
        #expect(p.target == 3)
        let low = O(ready: 3, opening: 0, freeStreams: 200, streamsPerConnection: 100, queued: 0, inFlight: 100)
        #expect(p.observe(low, now: 2 * second) == .keep)
        #expect(p.observe(low, now: 61 * second) == .keep, "this window (from the growth at 1 ns) held 250 of demand")
        #expect(p.observe(low, now: 121 * second) == .shrink, "peak 100 <= half of 2 x 100")
        #expect(p.target == 2)
        // 100 in flight is not at or below half of one connection (50): the pool stays at 2.
        #expect(p.observe(low, now: 182 * second) == .keep)
        #expect(p.target == 2)
        let idle = O(ready: 2, opening: 0, freeStreams: 200, streamsPerConnection: 100, queued: 0, inFlight: 0)
        #expect(p.observe(idle, now: 183 * second) == .keep)
        #expect(p.observe(idle, now: 242 * second) == .keep, "this window began with 100 in flight (at 182 s)")
        #expect(p.observe(idle, now: 302 * second) == .shrink, "a whole window idle")
        #expect(p.target == 1)
        #expect(p.observe(idle, now: 500 * second) == .keep, "never below the minimum")
        #expect(p.target == 1)
    }

    @Test("A burst anywhere in the window keeps the connections: the peak counts, not the last value")
    func peakHolds() {
        var p = PoolSizing(minimum: 1, maximum: 2, shrinkWindowNanos: 10 * second)
        #expect(p.observe(saturated(1), now: 0) == .grow)
        let quiet = O(ready: 2, opening: 0, freeStreams: 200, streamsPerConnection: 100, queued: 0, inFlight: 0)
        let burst = O(ready: 2, opening: 0, freeStreams: 0, streamsPerConnection: 100, queued: 0, inFlight: 200)
        #expect(p.observe(quiet, now: 1 * second) == .keep)
        #expect(p.observe(burst, now: 5 * second) == .keep)
        #expect(p.observe(quiet, now: 10 * second) == .keep, "the burst (200) is above half of one connection")
        #expect(p.target == 2)
        #expect(p.observe(quiet, now: 20 * second) == .shrink, "a quiet window after it")
    }
}
