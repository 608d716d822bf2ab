/// Outcomes per second, from successive readings of a monotonic count (`done`) stamped with
/// Redis's clock: the count's growth over the last `windowMillis` divided by the time it took.
/// Pure: readings in, rates out; tested with made-up samples.
///
/// A rate needs two samples at least `minimumSpanMillis` apart; a count that goes down (the
/// counters were reset, Redis lost data) starts the series again instead of giving a negative rate.
public struct RateTracker: Sendable {
    /// The time a rate is measured over: the newest sample against the newest one at least
    /// this old (or the oldest there is).
    public var windowMillis: Int
    /// The least time between two samples that gives a rate.
    public var minimumSpanMillis: Int

    private struct Sample: Sendable { let time: Int, done: Int }
    private var series: [RateKey: [Sample]] = [:]

    /// A tracker with no samples.
    public init(windowMillis: Int = 10_000, minimumSpanMillis: Int = 500) {
        self.windowMillis = windowMillis
        self.minimumSpanMillis = minimumSpanMillis
    }

    /// Adds one sample per key (one tick); series without a sample in this tick are forgotten
    /// (a shard or campaign that went away).
    public mutating func record(_ samples: [RateKey: (time: Int, done: Int)]) {
        var next: [RateKey: [Sample]] = [:]
        for (key, sample) in samples {
            var s = series[key] ?? []
            if let last = s.last, sample.done < last.done || sample.time <= last.time { s.removeAll() }
            s.append(Sample(time: sample.time, done: sample.done))
            // Keep the newest sample at least a window old, and everything after it.
            if let keep = s.lastIndex(where: { $0.time <= sample.time - windowMillis }), keep > 0 { s.removeFirst(keep) }
            next[key] = s
        }
        series = next
    }

    /// The rate of `key` at its newest sample, per second; nil without two samples far enough apart.
    public func rate(_ key: RateKey) -> Double? {
        guard let s = series[key], let newest = s.last else { return nil }
        let base = s.last(where: { $0.time <= newest.time - windowMillis }) ?? s[0]
        let span = newest.time - base.time
        guard span >= minimumSpanMillis else { return nil }
        return Double(newest.done - base.done) * 1000 / Double(span)
    }
}
