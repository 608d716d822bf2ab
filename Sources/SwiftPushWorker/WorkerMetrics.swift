import PushCore
import PushClientCore
import SwiftPushWorkerMachine

/// The worker's metrics, rendered in the Prometheus text format (version 0.0.4) for
/// `/metrics`. The loop updates them; the metrics thread renders them; one lock guards both
/// (an update is a few additions, a scrape a few hundred lines).
public final class WorkerMetrics: @unchecked Sendable {
    private let lock = PThreadMutex()
    private var outcomes: [OutcomeKey: Int] = [:]
    private var counters: [String: Int] = [:]
    private var gauges: [String: Double] = [:]
    /// Latency buckets' upper bounds, in seconds (send to outcome).
    static let bounds: [Double] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]
    private var buckets = [Int](repeating: 0, count: bounds.count)
    private var latencyCount = 0
    private var latencySum = 0.0
    /// When the loop last published (monotonic ns, by `clock`).
    private var lastLoopNanos: UInt64
    /// Monotonic nanoseconds: the driver's clock (`WorkerClock`) when a driver made these.
    private let clock: @Sendable () -> UInt64

    private struct OutcomeKey: Hashable { let app: String, outcome: String, reason: String }

    /// Empty metrics, timed by the real monotonic clock.
    public convenience init() { self.init(clock: { MonotonicTime.nanos() }) }

    /// Empty metrics, timed by `clock` (monotonic ns): the loop's liveness (`isLive`) is
    /// measured on it.
    public init(clock: @escaping @Sendable () -> UInt64) {
        self.clock = clock
        lastLoopNanos = clock()
    }

    /// The apps' clients, whose own figures (`push_client_metrics_text`: connections, retries,
    /// GOAWAYs, answer latency...) follow the worker's on the page, labelled by app. Set once
    /// by the worker before serving; the fast lane's clients (`AppClients.fastClients`) also
    /// labelled `lane="fast"`.
    private var appClients: [(app: String, fast: Bool, client: PushClientGroup)] = []

    /// The events of trouble with APNs, counted by app and kind (set once by the worker).
    private var events: APNsEventLog?

    /// Adds the event counts to what `render` shows.
    func showEvents(_ log: APNsEventLog) {
        lock.withLock { events = log }
    }

    /// Adds the apps' clients (`AppClients.all`) to what `render` shows.
    func showClients(_ clients: [(app: String, fast: Bool, client: PushClientGroup)]) {
        lock.withLock { appClients = clients }
    }

    /// Counts the outcomes a settle recorded, and their latencies (one lock for the batch).
    func outcomes(_ tallies: [OutcomeTally]) {
        lock.withLock {
            for t in tallies {
                outcomes[OutcomeKey(app: t.app, outcome: t.kind.rawValue, reason: t.reason), default: 0] += t.count
                for us in t.latenciesUs where us > 0 {
                    let seconds = Double(us) / 1e6
                    if let i = Self.bounds.firstIndex(where: { seconds <= $0 }) { buckets[i] += 1 }
                    latencyCount += 1
                    latencySum += seconds
                }
            }
        }
    }

    /// Publishes the loop's counters and gauges (names without the `swiftpush_worker_` prefix).
    func publish(counters c: [String: Int], gauges g: [String: Double]) {
        lock.withLock {
            counters = c
            gauges = g
            lastLoopNanos = clock()
        }
    }

    /// Whether the loop has published within `millis`: a hung loop fails `/healthz`.
    public func isLive(withinMillis millis: UInt64) -> Bool {
        lock.withLock {
            let now = clock()
            return now < lastLoopNanos || now - lastLoopNanos < millis * 1_000_000
        }
    }

    /// The figures as values (the status page's view of this worker).
    public func snapshot() -> WorkerMetricsSnapshot {
        lock.withLock {
            WorkerMetricsSnapshot(
                outcomes: outcomes.map { WorkerMetricsSnapshot.Outcome(app: $0.key.app, outcome: $0.key.outcome, reason: $0.key.reason, count: $0.value) }
                    .sorted { $0.count != $1.count ? $0.count > $1.count : ($0.app, $0.outcome, $0.reason) < ($1.app, $1.outcome, $1.reason) },
                counters: counters, gauges: gauges)
        }
    }

    /// The Prometheus text exposition.
    public func render() -> String {
        lock.withLock {
            var s = "# HELP swiftpush_worker_outcomes_total Outcomes recorded, by app, outcome and reason.\n"
            s += "# TYPE swiftpush_worker_outcomes_total counter\n"
            for (k, n) in outcomes.sorted(by: { ($0.key.app, $0.key.outcome, $0.key.reason) < ($1.key.app, $1.key.outcome, $1.key.reason) }) {
                s += "swiftpush_worker_outcomes_total{app=\"\(Self.escape(k.app))\",outcome=\"\(k.outcome)\",reason=\"\(Self.escape(k.reason))\"} \(n)\n"
            }
            for (name, n) in counters.sorted(by: { $0.key < $1.key }) {
                s += "# TYPE swiftpush_worker_\(name)_total counter\nswiftpush_worker_\(name)_total \(n)\n"
            }
            for (name, v) in gauges.sorted(by: { $0.key < $1.key }) {
                s += "# TYPE swiftpush_worker_\(name) gauge\nswiftpush_worker_\(name) \(Self.number(v))\n"
            }
            s += "# HELP swiftpush_worker_apns_events_total Trouble on the way to APNs, by app and event (each also logged as it happens).\n"
            s += "# TYPE swiftpush_worker_apns_events_total counter\n"
            for e in events?.totals() ?? [] {
                s += "swiftpush_worker_apns_events_total{app=\"\(Self.escape(e.app))\",event=\"\(e.kind.rawValue)\"} \(e.count)\n"
            }
            s += "# HELP swiftpush_worker_latency_seconds From the first send to the recorded outcome.\n"
            s += "# TYPE swiftpush_worker_latency_seconds histogram\n"
            var cumulative = 0
            for (i, b) in Self.bounds.enumerated() {
                cumulative += buckets[i]
                s += "swiftpush_worker_latency_seconds_bucket{le=\"\(Self.number(b))\"} \(cumulative)\n"
            }
            s += "swiftpush_worker_latency_seconds_bucket{le=\"+Inf\"} \(latencyCount)\n"
            s += "swiftpush_worker_latency_seconds_sum \(Self.number(latencySum))\n"
            s += "swiftpush_worker_latency_seconds_count \(latencyCount)\n"
            // The library's own metrics, one family each with a sample per app.
            s += ClientMetrics.prometheusText(appClients.map { ("app=\"\(Self.escape($0.app))\"" + ($0.fast ? ",lane=\"fast\"" : ""), $0.client.metrics()) })
            return s
        }
    }

    private static func number(_ v: Double) -> String {
        v == v.rounded() && abs(v) < 1e15 ? String(Int64(v)) : String(v)
    }

    /// Label values escape backslash, quote and newline (the exposition format's rule).
    private static func escape(_ s: String) -> String {
        var out = ""
        for c in s {
            switch c {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            default: out.append(c)
            }
        }
        return out
    }
}
