/// Outcomes per second, from successive readings of a monotonic count (`done`) stamped with
/// Redis's clock: the count's growth over the samples of the last `windowMillis` divided by the
/// time it took. Pure: readings in, rates out; tested with made-up samples.
///
/// A rate needs two samples at least `minimumSpanMillis` apart, both within the window: after a
/// pause in the reads (nobody looked at the page), the first read has no rate rather than the
/// average over the pause, which would be a figure nobody measured (issue 35). A count that goes
/// down (the counters were reset, Redis lost data) starts the series again instead of giving a
/// negative rate.
public struct RateTracker: Sendable {
    /// The time a rate is measured over at most: the newest sample against the oldest one that
    /// is at most this much older.
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
            // Only the window's samples: an older one would stretch the rate over a time nobody read.
            s.removeAll { $0.time < sample.time - windowMillis }
            next[key] = s
        }
        series = next
    }

    /// The rate of `key` at its newest sample, per second; nil without two samples far enough apart.
    public func rate(_ key: RateKey) -> Double? {
        guard let s = series[key], let newest = s.last else { return nil }
        let base = s[0]
        let span = newest.time - base.time
        guard span >= minimumSpanMillis else { return nil }
        return Double(newest.done - base.done) * 1000 / Double(span)
    }
}
