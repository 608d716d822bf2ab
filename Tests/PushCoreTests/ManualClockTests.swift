import PushCore
import Testing

@Suite("ManualClock", .timeLimit(.minutes(1)))
struct ManualClockTests {
    @Test("A manual clock starts at the given wall time with the monotonic clock at zero")
    func startsWhereTold() {
        let clock = ManualClock(wallSeconds: 1_700_000_000)
        #expect(clock.wallSeconds() == 1_700_000_000)
        #expect(clock.monotonicNanos() == 0)
    }

    @Test("Advancing moves both clocks by the same amount and nothing else moves them")
    func advancesBothClocks() {
        let clock = ManualClock(wallSeconds: 100)
        clock.advance(seconds: 90)
        #expect(clock.wallSeconds() == 190)
        #expect(clock.monotonicNanos() == 90_000_000_000)
        #expect(clock.wallSeconds() == 190)
    }

    @Test("The system clock's monotonic time never goes backwards")
    func systemMonotonic() {
        let a = SystemClock.shared.monotonicNanos()
        let b = SystemClock.shared.monotonicNanos()
        #expect(b >= a)
        #expect(SystemClock.shared.wallSeconds() > 1_600_000_000)
    }
}
