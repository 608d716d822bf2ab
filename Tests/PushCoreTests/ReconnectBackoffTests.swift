import Testing
import PushCore

/// The reconnect back-off as a pure rule: times are made up (nanoseconds), jitter is given.
@Suite("Reconnect back-off", .timeLimit(.minutes(1)))
struct ReconnectBackoffTests {
    static let second: UInt64 = 1_000_000_000

    @Test("No back-off until a failure: every attempt may start")
    func freshAllowsAttempts() {
        var b = ReconnectBackoff()
        #expect(!b.isBackingOff)
        #expect(b.mayAttempt(now: 0))
        b.attemptStarted()
        #expect(!b.probeInProgress)
        #expect(b.mayAttempt(now: 0), "not backing off: the whole pool may open")
    }

    @Test("The delay bound doubles from 1 s and stops at 60 s")
    func bounds() {
        let b = ReconnectBackoff()
        let seconds = (1...9).map { b.delayBound(afterFailures: $0) / Self.second }
        #expect(seconds == [1, 2, 4, 8, 16, 32, 60, 60, 60])
        #expect(b.delayBound(afterFailures: 0) == 0)
        #expect(b.delayBound(afterFailures: 10_000) == 60 * Self.second, "no overflow")
        let custom = ReconnectBackoff(firstDelayMillis: 250, maxDelayMillis: 5000)
        #expect(custom.delayBound(afterFailures: 1) == Self.second / 4)
        #expect(custom.delayBound(afterFailures: 6) == 5 * Self.second)
    }

    @Test("Jitter: the delay lies in [d/2, d)", arguments: [0.0, 0.25, 0.5, 0.999999, 1.0])
    func jitter(unit: Double) throws {
        var b = ReconnectBackoff()
        for n in 1...8 {
            let d = b.delayBound(afterFailures: n)
            let start = b.lastFailureNanos + 1
            let chosen = b.failed(now: start + 1, attemptStartedNanos: start, unit: unit)
            let delay = try #require(chosen)
            #expect(delay >= d / 2 && delay < d, "failure \(n): \(delay) not in [\(d / 2), \(d))")
            #expect(b.nextAttemptNanos == start + 1 + delay)
        }
    }

    @Test("While backing off: no attempt before the time, then one probe at a time")
    func probeGate() {
        var b = ReconnectBackoff()
        b.failed(now: 10 * Self.second, attemptStartedNanos: 9 * Self.second, unit: 0.5)
        let next = b.nextAttemptNanos
        #expect(!b.mayAttempt(now: next - 1))
        #expect(b.mayAttempt(now: next))
        b.attemptStarted()
        #expect(b.probeInProgress)
        #expect(!b.mayAttempt(now: next + 100 * Self.second), "one probe at a time")
        b.probeEnded()
        #expect(b.mayAttempt(now: next))
    }

    @Test("Connections refused together count once; the probe's failure doubles the delay")
    func episodes() {
        var b = ReconnectBackoff()
        // Three pool connections started at t=0, refused at t=1, 1.1 and 1.2 s.
        let first = b.failed(now: Self.second, attemptStartedNanos: 0, unit: 0)
        let second = b.failed(now: Self.second + Self.second / 10, attemptStartedNanos: 0, unit: 0)
        let third = b.failed(now: Self.second + Self.second / 5, attemptStartedNanos: 0, unit: 0)
        #expect(first != nil)
        #expect(second == nil && third == nil)
        #expect(b.failures == 1)
        // The probe (started after the failure) fails: two failures now.
        let probeStart = b.nextAttemptNanos
        b.attemptStarted()
        let probeDelay = b.failed(now: probeStart + 1000, attemptStartedNanos: probeStart, unit: 0)
        #expect(probeDelay == Self.second)
        #expect(b.failures == 2)
        #expect(!b.probeInProgress)
    }

    @Test("Connections started and refused at one clock reading (a clock that stands still) count once")
    func episodeAtOneReading() {
        let clock = ManualClock(wallSeconds: 1_700_000_000)
        clock.advance(seconds: 1)
        var b = ReconnectBackoff()
        let now = clock.monotonicNanos()
        #expect(b.failed(now: now, attemptStartedNanos: now, unit: 0) != nil)
        #expect(b.failed(now: now, attemptStartedNanos: now, unit: 0) == nil)
        #expect(b.failed(now: now, attemptStartedNanos: now, unit: 0) == nil)
        #expect(b.failures == 1 && b.nextAttemptNanos == now + Self.second / 2)
        // Nothing may start until the clock reaches the next attempt; the probe then may.
        #expect(!b.mayAttempt(now: clock.monotonicNanos()))
        clock.advance(nanos: b.nextAttemptNanos - clock.monotonicNanos() - 1)
        #expect(!b.mayAttempt(now: clock.monotonicNanos()))
        clock.advance(nanos: 1)
        #expect(b.mayAttempt(now: clock.monotonicNanos()))
        b.attemptStarted()
        // The probe, started at that reading and refused at it too, doubles the delay.
        let probe = clock.monotonicNanos()
        #expect(b.failed(now: probe, attemptStartedNanos: probe, unit: 0) == Self.second)
        #expect(b.failures == 2)
    }

    @Test("Only an accepted notification ends the back-off")
    func success() {
        var b = ReconnectBackoff()
        b.failed(now: 5, attemptStartedNanos: 0, unit: 0)
        b.failed(now: 10 * Self.second, attemptStartedNanos: 6, unit: 0)
        b.attemptStarted()
        b.probeEnded()
        #expect(b.isBackingOff, "a probe that ended without an accepted notification does not reset")
        b.succeeded()
        #expect(!b.isBackingOff)
        #expect(b.failures == 0)
        #expect(b.mayAttempt(now: 0))
        // After a reset the schedule starts again from the first delay.
        b.failed(now: 20 * Self.second, attemptStartedNanos: 19 * Self.second, unit: 0)
        #expect(b.nextAttemptNanos == 20 * Self.second + Self.second / 2)
    }

    @Test("The documented bound: a pool of N opens at most N + 5 connections in 30 s and N + 6 in 60 s of refusals, 2 a minute at the cap")
    func connectionBound() {
        // The fastest schedule allowed: every attempt starts the moment the gate opens and fails
        // at once, with the smallest jitter.
        for poolSize in [1, 2, 8] {
            var b = ReconnectBackoff()
            var attempts: [UInt64] = Array(repeating: 0, count: poolSize)
            for _ in 0..<poolSize { b.failed(now: 1, attemptStartedNanos: 0, unit: 0) }
            var now: UInt64 = 0
            while now < 200 * Self.second {
                now = b.nextAttemptNanos
                #expect(b.mayAttempt(now: now))
                b.attemptStarted()
                attempts.append(now)
                b.failed(now: now, attemptStartedNanos: now, unit: 0)
            }
            #expect(attempts.filter { $0 <= 30 * Self.second }.count == poolSize + 5)
            #expect(attempts.filter { $0 <= 60 * Self.second }.count == poolSize + 6)
            let late = attempts.filter { $0 >= 120 * Self.second && $0 < 180 * Self.second }
            #expect(late.count <= 2)
        }
    }
}
