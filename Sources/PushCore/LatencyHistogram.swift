/// A fixed-size log-linear histogram of latencies in microseconds, for p50/p99 in the stats.
///
/// Four buckets per power of two (so a reported percentile is within ~19% of the truth) from
/// 1 µs to about 4,300 s; recording is a few instructions and never allocates, so the I/O
/// thread can record every answer.
public struct LatencyHistogram: Sendable, Equatable {
    /// Buckets per power of two.
    static let subBuckets = 4
    /// Number of buckets: 32 powers of two.
    public static let bucketCount = 32 * subBuckets
    private var counts = [UInt64](repeating: 0, count: LatencyHistogram.bucketCount)
    /// How many values were recorded.
    public private(set) var total: UInt64 = 0
    /// The sum of the recorded values (microseconds), for averages and Prometheus's `_sum`.
    public private(set) var sumMicros: UInt64 = 0

    public init() {}

    /// The bucket of a value: the power of two, then which quarter of it.
    static func bucket(_ micros: Int64) -> Int {
        let v = UInt64(max(micros, 1))
        let power = 63 - v.leadingZeroBitCount
        let quarter = power >= 2 ? Int((v >> UInt64(power - 2)) & 3) : 0
        return min(power * subBuckets + quarter, bucketCount - 1)
    }

    /// The upper bound of a bucket, reported as the percentile's value.
    static func upperBound(_ bucket: Int) -> Int64 {
        let power = bucket / subBuckets, quarter = bucket % subBuckets
        if power < 2 { return Int64(1) << Int64(power + 1) }
        return (Int64(1) << Int64(power)) + (Int64(quarter + 1) << Int64(power - 2))
    }

    /// Records one latency.
    public mutating func record(micros: Int64) {
        counts[Self.bucket(micros)] &+= 1
        total &+= 1
        sumMicros &+= UInt64(max(micros, 0))
    }

    /// Adds `other` into this histogram.
    public mutating func merge(_ other: LatencyHistogram) {
        for i in 0..<Self.bucketCount { counts[i] &+= other.counts[i] }
        total &+= other.total
        sumMicros &+= other.sumMicros
    }

    /// The value below which `fraction` (0...1) of the recorded values lie; 0 when empty.
    public func percentile(_ fraction: Double) -> Int64 {
        guard total > 0 else { return 0 }
        let rank = UInt64((Double(total) * min(max(fraction, 0), 1)).rounded(.up))
        var seen: UInt64 = 0
        for i in 0..<Self.bucketCount {
            seen &+= counts[i]
            if seen >= max(rank, 1) { return Self.upperBound(i) }
        }
        return Self.upperBound(Self.bucketCount - 1)
    }

    /// How many recorded values fell in buckets whose upper bound is at most `micros` (a
    /// cumulative count at the histogram's resolution: a quarter of a power of two).
    public func count(atMostMicros micros: Int64) -> UInt64 {
        var n: UInt64 = 0
        for i in 0..<Self.bucketCount where Self.upperBound(i) <= micros { n &+= counts[i] }
        return n
    }
}
