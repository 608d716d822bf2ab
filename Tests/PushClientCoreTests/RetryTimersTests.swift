import Testing
@testable import PushClientCore
@testable import PushClientMachine

/// The delayed-retry heap: due order whatever the insertion order, so the I/O loop can sleep
/// until exactly the next one.
@Suite("Retry timers", .timeLimit(.minutes(1)))
struct RetryTimersTests {
    @Test("Slots come out in due order; firstDue is always the earliest")
    func dueOrder() {
        var timers = RetryTimers()
        #expect(timers.isEmpty && timers.firstDue == nil && timers.popFirst() == -1)
        var generator = SystemRandomNumberGenerator()
        var expected: [(UInt64, Int32)] = []
        for i in 0..<1000 {
            let due = UInt64.random(in: 0..<10_000, using: &generator)
            timers.insert(Int32(i), at: due)
            expected.append((due, Int32(i)))
        }
        #expect(timers.count == 1000)
        var last: UInt64 = 0
        var seen = Set<Int32>()
        while let due = timers.firstDue {
            #expect(due >= last)
            last = due
            let index = timers.popFirst()
            #expect(expected[Int(index)].0 == due, "slot \(index) came out at its own due time")
            seen.insert(index)
        }
        #expect(seen.count == 1000 && timers.isEmpty)
    }

    @Test("removeAll empties it, earliest first")
    func removeAll() {
        var timers = RetryTimers()
        for (i, due) in [50, 10, 30, 20, 40].enumerated() { timers.insert(Int32(i), at: UInt64(due)) }
        #expect(timers.removeAll() == [1, 3, 2, 4, 0])
        #expect(timers.isEmpty)
    }
}
