import SwiftPushWorkerMachine

/// What `WorkerMetrics` holds at one moment, as values: the status page's "this worker" (the
/// same figures as `/metrics`, without the text format).
public struct WorkerMetricsSnapshot: Sendable {
    /// One outcome count: an app, an outcome (`ACCEPTED`, `REJECTED`, `FAILED`) and a reason
    /// (empty when accepted).
    public struct Outcome: Sendable, Equatable {
        /// The app.
        public var app: String
        /// The outcome.
        public var outcome: String
        /// The reason.
        public var reason: String
        /// How many.
        public var count: Int
    }

    /// Outcomes recorded since the worker started, most frequent first.
    public var outcomes: [Outcome]
    /// The loop's counters (`read`, `sent`...).
    public var counters: [String: Int]
    /// The loop's gauges (`in_flight`, `pending`...).
    public var gauges: [String: Double]
}
