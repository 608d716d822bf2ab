/// The worker serving the page, from its own metrics: what it did since it started, by app,
/// outcome and reason — the breakdown the page can show even where the workers count nothing
/// in Redis.
public struct LocalWorkerStatus: Encodable, Sendable {
    /// One line of its outcome counts.
    public struct Outcome: Encodable, Sendable {
        /// The app.
        public var app: String
        /// `ACCEPTED`, `REJECTED` or `FAILED`.
        public var outcome: String
        /// The reason (empty when accepted).
        public var reason: String
        /// How many notifications.
        public var count: Int

        enum CodingKeys: String, CodingKey { case app, outcome, reason, count = "notifications" }

        /// A line given field by field.
        public init(app: String, outcome: String, reason: String, count: Int) {
            self.app = app
            self.outcome = outcome
            self.reason = reason
            self.count = count
        }
    }

    /// Its consumer name.
    public var consumer: String
    /// The shards it serves.
    public var shards: [String]
    /// Whether its loop is running (what `/healthz` says).
    public var live: Bool
    /// Its outcomes since it started, most frequent first.
    public var outcomes: [Outcome]
    /// Its counters (`read`, `sent`, `reclaimed`...), named as on `/metrics` (unchanged: each
    /// is documented there with its unit).
    public var counters: [String: Int]
    /// Its gauges (`in_flight`, `held_entries`, `pending`, `lag`...).
    public var gauges: [String: Double]

    /// A status given field by field.
    public init(consumer: String, shards: [String], live: Bool, outcomes: [Outcome], counters: [String: Int], gauges: [String: Double]) {
        self.consumer = consumer
        self.shards = shards
        self.live = live
        self.outcomes = outcomes
        self.counters = counters
        self.gauges = gauges
    }
}
