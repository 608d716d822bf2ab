import SwiftPushWorker
import Testing

@Suite("Backoff")
struct BackoffTests {
    @Test("Delays double up to the cap, with the highest draw")
    func doublesToCap() {
        var b = Backoff(baseMillis: 100, capMillis: 1000)
        let delays = (0..<6).map { _ in b.nextDelayMillis(random: { 0.999_999_9 }) }
        #expect(delays == [99, 199, 399, 799, 999, 999])
    }

    @Test("The lowest draw waits half the base: never zero, so a fleet cannot spin")
    func floor() {
        var b = Backoff(baseMillis: 100, capMillis: 5000)
        #expect((0..<5).map { _ in b.nextDelayMillis(random: { 0 }) } == [50, 50, 50, 50, 50])
    }

    @Test("Jitter spreads a fleet: 1,000 workers' third delays take many values within bounds")
    func jitter() {
        var seen = Set<Int>()
        for _ in 0..<1000 {
            var b = Backoff(baseMillis: 100, capMillis: 5000)
            _ = b.nextDelayMillis(); _ = b.nextDelayMillis()
            let d = b.nextDelayMillis()
            #expect((50...400).contains(d))
            seen.insert(d)
        }
        #expect(seen.count > 100)
    }

    @Test("reset starts again from the base; a thousand failures stay at the cap")
    func resetAndOverflow() {
        var b = Backoff(baseMillis: 100, capMillis: 5000)
        for _ in 0..<1000 { #expect(b.nextDelayMillis(random: { 0.5 }) <= 5000) }
        b.reset()
        #expect(b.failures == 0 && b.nextDelayMillis(random: { 0.999_999_9 }) == 99)
    }
}
