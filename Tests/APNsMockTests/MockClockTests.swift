import Testing
import PushCore
@testable import APNsMock

/// The mock's reading of its clock: once per input read for what requests are judged by,
/// fresh for the loop's own questions.
@Suite(.timeLimit(.minutes(1))) struct MockClockTests {
    @Test("Request times are read once per input: a move of the clock shows after the next input")
    func oncePerInput() {
        let source = ManualClock(wallSeconds: 1_000)
        let clock = MockClock(source)
        #expect(clock.wallSeconds() == 1_000 && clock.monotonicNanos() == 0)
        source.advance(seconds: 5)
        #expect(clock.wallSeconds() == 1_000 && clock.monotonicNanos() == 0, "the same input")
        #expect(clock.currentMonotonicNanos() == 5_000_000_000, "the loop's questions read it fresh")
        clock.newInput()
        #expect(clock.wallSeconds() == 1_005 && clock.monotonicNanos() == 5_000_000_000)
    }
}
