/// Everything one read of the fleet found: each shard's reading, the rates measured up to it,
/// and the rates of the reads before (the page's chart). A value: the page's server hands the
/// same snapshot to every client, each seeing it through its own focus (`FleetStatus`).
public struct StatusSnapshot: Sendable {
    /// One rate measurement of every series at one read.
    public struct Tick: Sendable {
        /// Redis's clock at the read, UNIX ms.
        public var timeMillis: Int
        /// The rate of each series that had one.
        public var rates: [RateKey: Double]
        /// Every series sampled at this read (with or without a rate: the first read of a
        /// series, or the first after a pause, has none).
        public var sampled: Set<RateKey>

        /// A tick given field by field; `sampled` defaults to the series with a rate.
        public init(timeMillis: Int, rates: [RateKey: Double], sampled: Set<RateKey>? = nil) {
            self.timeMillis = timeMillis
            self.rates = rates
            self.sampled = sampled ?? Set(rates.keys)
        }
    }

    /// The consumer group read.
    public var group: String
    /// The newest Redis time of the read (UNIX ms); 0 when nothing could be read.
    public var timeMillis: Int
    /// One reading per shard, in shard order.
    public var readings: [ShardReading]
    /// The reads so far, oldest first, the last being this one.
    public var history: [Tick]
    /// Why nothing (or not every shard) could be read: Redis unreachable, shards not found.
    public var error: String?
    /// Every shard with a `push:{s}` stream, when the reader looked (to name the known ones
    /// beside an unknown one); nil when it did not.
    public var knownShards: [String]?
    /// The rate's window (`RateTracker.windowMillis`): reads further apart are a gap in the chart.
    public var rateWindowMillis = 10_000

    /// A snapshot given field by field (tests; the reader makes the real ones).
    public init(group: String, timeMillis: Int, readings: [ShardReading], history: [Tick], error: String? = nil) {
        self.group = group
        self.timeMillis = timeMillis
        self.readings = readings
        self.history = history
        self.error = error
    }

    /// The rate of `key` at this read.
    public func rate(_ key: RateKey) -> Double? { history.last?.rates[key] }
}
