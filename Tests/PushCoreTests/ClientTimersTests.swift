import PushCore
import Testing

/// The I/O thread's time rules (`ClientTimers`), driven by a `ManualClock`: each decision flips
/// exactly when the clock passes its limit, and not a nanosecond before.
@Suite("ClientTimers", .timeLimit(.minutes(1)))
struct ClientTimersTests {
    let timers = ClientTimers(idlePingMillis: 60_000, pingTimeoutMillis: 10_000, connectTimeoutMillis: 10_000)

    /// A clock one second in, and its reading.
    func startedClock() -> ManualClock {
        let clock = ManualClock(wallSeconds: 1_700_000_000)
        clock.advance(seconds: 1)
        return clock
    }

    @Test("An idle connection is PINGed once it has been idle longer than the idle time, and not before")
    func idlePing() {
        let clock = startedClock()
        let lastInput = clock.monotonicNanos()
        clock.advance(millis: 60_000)
        #expect(timers.health(now: clock.monotonicNanos(), lastInputNanos: lastInput, pingSentNanos: 0) == .fine,
                "exactly the idle time is not longer than it")
        clock.advance(nanos: 1)
        #expect(timers.health(now: clock.monotonicNanos(), lastInputNanos: lastInput, pingSentNanos: 0) == .sendPing)
        // New input restarts the idle time.
        let input = clock.monotonicNanos()
        clock.advance(millis: 30_000)
        #expect(timers.health(now: clock.monotonicNanos(), lastInputNanos: input, pingSentNanos: 0) == .fine)
    }

    @Test("A PING unanswered for longer than the PING timeout retires the connection; an outstanding one is not resent")
    func pingTimeout() {
        let clock = startedClock()
        let lastInput = clock.monotonicNanos()
        clock.advance(millis: 61_000)
        let sent = clock.monotonicNanos()
        clock.advance(millis: 5_000)
        #expect(timers.health(now: clock.monotonicNanos(), lastInputNanos: lastInput, pingSentNanos: sent) == .fine,
                "idle, but a PING is already out")
        clock.advance(millis: 5_000)
        #expect(timers.health(now: clock.monotonicNanos(), lastInputNanos: lastInput, pingSentNanos: sent) == .fine)
        clock.advance(nanos: 1)
        #expect(timers.health(now: clock.monotonicNanos(), lastInputNanos: lastInput, pingSentNanos: sent) == .pingUnanswered)
    }

    @Test("With PINGs off (idle time 0) no connection is ever PINGed or retired for silence")
    func pingsOff() {
        let off = ClientTimers(idlePingMillis: 0, pingTimeoutMillis: 10_000, connectTimeoutMillis: 10_000)
        let clock = startedClock()
        clock.advance(seconds: 86_400)
        #expect(off.health(now: clock.monotonicNanos(), lastInputNanos: 0, pingSentNanos: 0) == .fine)
        #expect(off.health(now: clock.monotonicNanos(), lastInputNanos: 0, pingSentNanos: 1) == .fine)
    }

    @Test("A connection attempt times out once it has taken longer than the connect timeout")
    func connectTimeout() {
        let clock = startedClock()
        let started = clock.monotonicNanos()
        clock.advance(millis: 10_000)
        #expect(!timers.connectTimedOut(now: clock.monotonicNanos(), startedNanos: started))
        clock.advance(nanos: 1)
        #expect(timers.connectTimedOut(now: clock.monotonicNanos(), startedNanos: started))
        // A start read after "now" (another thread's reading) is not overdue.
        #expect(!timers.connectTimedOut(now: started, startedNanos: clock.monotonicNanos()))
    }

    @Test("A deadline is due from the instant it is reached")
    func deadlines() {
        let clock = startedClock()
        let deadline = clock.monotonicNanos() + 60_000_000_000
        clock.advance(nanos: 59_999_999_999)
        #expect(!ClientTimers.isDue(deadline, now: clock.monotonicNanos()))
        clock.advance(nanos: 1)
        #expect(ClientTimers.isDue(deadline, now: clock.monotonicNanos()))
    }

    @Test("The loop sleeps until the earliest of the next scan, retry and reconnect, rounded up, at most 1 s")
    func sleep() {
        let now: UInt64 = 5_000_000_000
        let scan = now + ClientTimers.scanIntervalNanos
        #expect(ClientTimers.sleepMillis(now: now, nextScanNanos: scan, nextRetryNanos: nil, nextReconnectNanos: nil) == 50)
        #expect(ClientTimers.sleepMillis(now: now, nextScanNanos: scan, nextRetryNanos: now + 1, nextReconnectNanos: nil) == 1,
                "a retry due in 1 ns: sleep 1 ms, never release it early")
        #expect(ClientTimers.sleepMillis(now: now, nextScanNanos: scan, nextRetryNanos: now + 20_000_000, nextReconnectNanos: now + 10_000_000) == 10)
        #expect(ClientTimers.sleepMillis(now: now, nextScanNanos: scan, nextRetryNanos: nil, nextReconnectNanos: now - 1) == 50,
                "a reconnect time already past is the scan's to act on")
        #expect(ClientTimers.sleepMillis(now: now, nextScanNanos: now, nextRetryNanos: nil, nextReconnectNanos: nil) == 0)
        #expect(ClientTimers.sleepMillis(now: now, nextScanNanos: now + 5_000_000_000, nextRetryNanos: nil, nextReconnectNanos: nil) == 1000)
    }

    @Test("The manual clock's wall time follows whole seconds of monotonic time")
    func manualClockMillis() {
        let clock = ManualClock(wallSeconds: 100)
        clock.advance(millis: 999)
        #expect(clock.wallSeconds() == 100 && clock.monotonicNanos() == 999_000_000)
        clock.advance(millis: 1)
        #expect(clock.wallSeconds() == 101)
    }
}
