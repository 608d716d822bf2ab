/// Bounded, jittered exponential back-off ("full jitter"): the n-th consecutive failure waits a
/// uniformly random time in [base/2, min(cap, base * 2^n)]. Jitter spreads a fleet of workers
/// that lost Redis (or APNs) at the same moment, so they do not all come back at once; the cap
/// bounds the wait however long the outage. A pure value: the random source is injected, so
/// the policy is tested without sleeping.
public struct Backoff: Sendable {
    /// The first delay's upper bound, in milliseconds.
    public let baseMillis: Int
    /// No delay exceeds this, in milliseconds.
    public let capMillis: Int
    /// Consecutive failures so far.
    public private(set) var failures = 0

    /// A back-off starting at `baseMillis` and never exceeding `capMillis`.
    public init(baseMillis: Int = 100, capMillis: Int = 5000) {
        self.baseMillis = max(1, baseMillis)
        self.capMillis = max(self.baseMillis, capMillis)
    }

    /// The delay before the next attempt (and counts one more failure). `random` returns a
    /// value in 0..<1.
    public mutating func nextDelayMillis(random: () -> Double = { Double.random(in: 0..<1) }) -> Int {
        let shift = min(failures, 30)
        failures += 1
        let ceiling = min(capMillis, baseMillis << shift)
        let floor = min(baseMillis / 2, ceiling)
        return floor + Int(Double(ceiling - floor) * min(max(random(), 0), 0.999_999))
    }

    /// A success: the next failure starts from the base again.
    public mutating func reset() { failures = 0 }
}
