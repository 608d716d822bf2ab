import SwiftPushStatus
import Testing

@Suite("RateTracker", .timeLimit(.minutes(1)))
struct RateTrackerTests {
    let key = RateKey(shard: "0", scope: .all, unit: .notifications)

    @Test("The rate is the count's growth over the window, per second of Redis's clock")
    func rateOverWindow() {
        var t = RateTracker(windowMillis: 10_000, minimumSpanMillis: 500)
        t.record([key: (time: 1_000, done: 0)])
        #expect(t.rate(key) == nil)
        t.record([key: (time: 2_000, done: 500)])
        #expect(t.rate(key) == 500)
        for s in 3...20 { t.record([key: (time: s * 1000, done: (s - 1) * 500 + (s > 12 ? (s - 12) * 1500 : 0))]) }
        // At 20 s: the base is the sample of 10 s (4,500); 20 s holds 9,500 + 12,000.
        #expect(t.rate(key) == Double(9_500 + 12_000 - 4_500) / 10)
    }

    @Test("Two samples closer than the minimum span give no rate")
    func minimumSpan() {
        var t = RateTracker(windowMillis: 10_000, minimumSpanMillis: 500)
        t.record([key: (time: 1_000, done: 0)])
        t.record([key: (time: 1_200, done: 100)])
        #expect(t.rate(key) == nil)
        t.record([key: (time: 1_500, done: 150)])
        #expect(t.rate(key) == 300)
    }

    @Test("A count that goes down (counters reset) starts again instead of giving a negative rate")
    func reset() {
        var t = RateTracker()
        t.record([key: (time: 0, done: 1000)])
        t.record([key: (time: 1000, done: 2000)])
        t.record([key: (time: 2000, done: 10)])
        #expect(t.rate(key) == nil)
        t.record([key: (time: 3000, done: 110)])
        #expect(t.rate(key) == 100)
    }

    @Test("A series without a sample in a tick is forgotten; a change of unit is another series")
    func forgetting() {
        var t = RateTracker()
        let entries = RateKey(shard: "0", scope: .all, unit: .entries)
        t.record([entries: (time: 0, done: 0)])
        t.record([entries: (time: 1000, done: 100)])
        #expect(t.rate(entries) == 100)
        t.record([key: (time: 2000, done: 5000)])
        #expect(t.rate(entries) == nil && t.rate(key) == nil)
        t.record([key: (time: 3000, done: 5300)])
        #expect(t.rate(key) == 300)
    }
}
