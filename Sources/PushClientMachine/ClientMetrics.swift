import PushCore

/// A client's counters as the Prometheus text exposition format presents them
/// (`push_client_metrics_text`; the worker's `/metrics` embeds the same text). A plain value:
/// PushClient fills it under its lock, a group adds its threads' together, `prometheusText`
/// renders it; tested without a client.
public struct ClientMetrics: Sendable, Equatable {
    /// Notifications that ended, by (outcome, reason): `PUSH_OUTCOME_*` and `PUSH_REASON_*` values.
    public var outcomes: [OutcomeKey: UInt64] = [:]
    /// The client's counters: writes (`sent`), retries (`resent`), GOAWAYs, connection attempts.
    public var counters = ClientCounters()
    /// Connections ready now, and being opened now.
    public var connectionsOpen = 0
    public var connectionsOpening = 0
    /// Notifications queued (waiting for a stream or a retry), in flight, and with results not
    /// yet polled.
    public var queued = 0
    public var inFlight = 0
    public var unpolled = 0
    /// Answer latencies.
    public var latency = LatencyHistogram()

    /// An (outcome, reason) pair.
    public struct OutcomeKey: Hashable, Sendable, Comparable {
        public let outcome: Int32
        public let reason: Int32

        /// The pair (`PUSH_OUTCOME_*`, `PUSH_REASON_*`).
        package init(outcome: Int32, reason: Int32) {
            self.outcome = outcome
            self.reason = reason
        }

        public static func < (a: OutcomeKey, b: OutcomeKey) -> Bool { (a.outcome, a.reason) < (b.outcome, b.reason) }
    }

    public init() {}

    /// Adds another thread's (or client's) figures.
    public mutating func add(_ other: ClientMetrics) {
        outcomes.merge(other.outcomes, uniquingKeysWith: +)
        counters.add(other.counters)
        connectionsOpen += other.connectionsOpen
        connectionsOpening += other.connectionsOpening
        queued += other.queued
        inFlight += other.inFlight
        unpolled += other.unpolled
        latency.merge(other.latency)
    }

    /// The latency histogram's bucket bounds, in seconds (Prometheus's own defaults, widened a
    /// little for APNs's 10–100 ms answers).
    package static let latencyBounds: [Double] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60]

    /// The figures in Prometheus text format (0.0.4), each metric named `<prefix>_…` and
    /// carrying `labels` (e.g. `app="news"`, already escaped) besides its own.
    public func prometheusText(prefix: String = "swiftpush", labels: String = "") -> String {
        Self.prometheusText([(labels, self)], prefix: prefix)
    }

    /// Several clients' figures on one page (a worker serving many apps): each metric family
    /// once (its HELP and TYPE), with every set's samples under it, told apart by their labels.
    public static func prometheusText(_ sets: [(labels: String, metrics: ClientMetrics)], prefix: String = "swiftpush") -> String {
        var out = ""
        func family(_ name: String, _ type: String, _ help: String, _ samples: (String, ClientMetrics, (String) -> String) -> [(String, String)]) {
            out += "# HELP \(prefix)_\(name) \(help)\n# TYPE \(prefix)_\(name) \(type)\n"
            for (labels, m) in sets {
                func label(_ own: String) -> String {
                    let all = [labels, own].filter { !$0.isEmpty }.joined(separator: ",")
                    return all.isEmpty ? "" : "{\(all)}"
                }
                for (suffixAndLabels, value) in samples(labels, m, label) { out += "\(prefix)_\(name)\(suffixAndLabels) \(value)\n" }
            }
        }
        let outcomeNames: [Int32: String] = [1: "accepted", 2: "rejected", 3: "failed"]
        family("notifications_total", "counter", "Notifications that ended, by outcome and reason (reason \"None\" when accepted).") { _, m, label in
            m.outcomes.keys.sorted().map { key in
                let reason = key.reason == 0 ? "None" : (APNsReason(rawValue: key.reason)?.text ?? "Unknown")
                return (label("outcome=\"\(outcomeNames[key.outcome] ?? "unknown")\",reason=\"\(reason)\""), String(m.outcomes[key]!))
            }
        }
        family("writes_total", "counter", "Requests written to connections, every attempt counted.") { _, m, label in [(label(""), String(m.counters.sent))] }
        family("retries_total", "counter", "Notifications sent again (refused streams, GOAWAY, 429, 5xx, expired tokens).") { _, m, label in [(label(""), String(m.counters.resent))] }
        family("goaways_total", "counter", "GOAWAY frames received.") { _, m, label in [(label(""), String(m.counters.goaways))] }
        family("connections_started_total", "counter", "Connection attempts started.") { _, m, label in [(label(""), String(m.counters.connectionsOpened))] }
        family("connections", "gauge", "Connections by state.") { _, m, label in
            [(label("state=\"open\""), String(m.connectionsOpen)), (label("state=\"opening\""), String(m.connectionsOpening))]
        }
        family("queued", "gauge", "Notifications waiting for a stream or a retry.") { _, m, label in [(label(""), String(m.queued))] }
        family("in_flight", "gauge", "Notifications written and not yet answered.") { _, m, label in [(label(""), String(m.inFlight))] }
        family("unpolled", "gauge", "Results not yet polled.") { _, m, label in [(label(""), String(m.unpolled))] }
        family("answer_latency_seconds", "histogram", "Time from send to APNs's answer.") { _, m, label in
            var buckets: [(String, String)] = latencyBounds.map { le in
                ("_bucket" + label("le=\"\(le)\""), String(m.latency.count(atMostMicros: Int64(le * 1_000_000))))
            }
            buckets.append(("_bucket" + label("le=\"+Inf\""), String(m.latency.total)))
            buckets.append(("_sum" + label(""), String(Double(m.latency.sumMicros) / 1_000_000)))
            buckets.append(("_count" + label(""), String(m.latency.total)))
            return buckets
        }
        return out
    }
}
