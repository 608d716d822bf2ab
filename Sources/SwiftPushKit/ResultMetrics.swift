import CoreMetrics
import PushCore
import Synchronization

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
    private let handles = Mutex<[Int64: Handles]>([:])

    init(dimensions: [(String, String)]) {
        self.dimensions = dimensions
    }

    /// Records `results`.
    func record(_ results: some Collection<PushResult>) {
        if results.isEmpty { return }
        var counts: [Int64: (Handles, Int64)] = [:]
        for r in results {
            let key = Self.key(r)
            let h = counts[key]?.0 ?? handles(for: key, r)
            h.timer.recordNanoseconds(Int64(r.latency / .nanoseconds(1))) // from microseconds: far below Int64.max
            counts[key, default: (h, 0)].1 += 1
        }
        for (h, n) in counts.values { h.counter.increment(by: n) }
    }

    private static func key(_ r: PushResult) -> Int64 {
        let outcome: Int64 = r.outcome == .accepted ? 1 : r.outcome == .rejected ? 2 : 3
        return outcome << 32 | Int64(r.reason?.code.rawValue ?? 0)
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
