import CoreMetrics
import PushCore

/// The results' metrics, recorded through the global `MetricsSystem` (the host bootstraps the
/// backend: Prometheus, StatsD, OpenTelemetry; the library never picks one):
/// - `swiftpush_notifications_total` (counter), dimensions `outcome` (accepted, rejected,
///   failed) and `reason` (APNs's spelling; "None" when accepted, "Unknown" for reasons not
///   in the table), the configuration's `metricsDimensions` after them;
/// - `swiftpush_notification_latency` (timer, nanoseconds from send to outcome), same
///   dimensions.
/// A take's results are counted together (one increment per kind); each latency is recorded.
final class ResultMetrics: Sendable {
    private struct Handles {
        let counter: Counter
        let timer: CoreMetrics.Timer
    }

    private let dimensions: [(String, String)]
    /// One counter and timer per (outcome, reason), made on first use.
    private let handles = Locked<[Int64: Handles]>([:])

    init(dimensions: [(String, String)]) {
        self.dimensions = dimensions
    }

    /// Records the results of a take: each latency, and one increment per run of results of
    /// the same kind (a take is mostly of one kind: no table is built per take).
    func record(_ results: ArraySlice<TaggedResult>) {
        var run: (key: Int64, handles: Handles, count: Int64)?
        // Fields read in place: copying each result would retain and release its strings.
        results.withUnsafeBufferPointer { taken in
            for i in taken.indices {
                let key = taken[i].result.kind
                if run?.key != key {
                    if let run { run.handles.counter.increment(by: run.count) }
                    run = (key, handles(for: key, taken[i].result), 0)
                }
                run!.count += 1
                run!.handles.timer.recordNanoseconds(taken[i].result.latencyMicroseconds &* 1000)
            }
        }
        if let run { run.handles.counter.increment(by: run.count) }
    }

    private func handles(for key: Int64, _ r: PushResult) -> Handles {
        handles.withLock { table in
            if let h = table[key] { return h }
            let reason = r.reason.map { $0.isKnown ? $0.text : "Unknown" } ?? "None"
            let dims = [("outcome", r.outcome.description), ("reason", reason)] + dimensions
            let h = Handles(counter: Counter(label: "swiftpush_notifications_total", dimensions: dims),
                            timer: CoreMetrics.Timer(label: "swiftpush_notification_latency", dimensions: dims))
            table[key] = h
            return h
        }
    }
}
