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
    static let latencyBounds: [Double] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60]

    /// The figures in Prometheus text format (0.0.4), each metric named `<prefix>_…` and
    /// carrying `labels` (e.g. `app="news"`, already escaped) besides its own.
    public func prometheusText(prefix: String = "swiftpush", labels: String = "") -> String {
        var out = ""
        func label(_ own: String) -> String {
            let all = [labels, own].filter { !$0.isEmpty }.joined(separator: ",")
            return all.isEmpty ? "" : "{\(all)}"
        }
        func metric(_ name: String, _ type: String, _ help: String, _ samples: [(String, String)]) {
            out += "# HELP \(prefix)_\(name) \(help)\n# TYPE \(prefix)_\(name) \(type)\n"
            for (suffixAndLabels, value) in samples { out += "\(prefix)_\(name)\(suffixAndLabels) \(value)\n" }
        }
        let outcomeNames: [Int32: String] = [1: "accepted", 2: "rejected", 3: "failed"]
        metric("notifications_total", "counter", "Notifications that ended, by outcome and reason (reason \"None\" when accepted).",
               outcomes.keys.sorted().map { key in
                   let reason = key.reason == 0 ? "None" : (APNsReason(rawValue: key.reason)?.text ?? "Unknown")
                   return (label("outcome=\"\(outcomeNames[key.outcome] ?? "unknown")\",reason=\"\(reason)\""), String(outcomes[key]!))
               })
        metric("writes_total", "counter", "Requests written to connections, every attempt counted.", [(label(""), String(counters.sent))])
        metric("retries_total", "counter", "Notifications sent again (refused streams, GOAWAY, 429, 5xx, expired tokens).", [(label(""), String(counters.resent))])
        metric("goaways_total", "counter", "GOAWAY frames received.", [(label(""), String(counters.goaways))])
        metric("connections_started_total", "counter", "Connection attempts started.", [(label(""), String(counters.connectionsOpened))])
        metric("connections", "gauge", "Connections by state.",
               [(label("state=\"open\""), String(connectionsOpen)), (label("state=\"opening\""), String(connectionsOpening))])
        metric("queued", "gauge", "Notifications waiting for a stream or a retry.", [(label(""), String(queued))])
        metric("in_flight", "gauge", "Notifications written and not yet answered.", [(label(""), String(inFlight))])
        metric("unpolled", "gauge", "Results not yet polled.", [(label(""), String(unpolled))])
        var buckets: [(String, String)] = Self.latencyBounds.map { le in
            ("_bucket" + label("le=\"\(le)\""), String(latency.count(atMostMicros: Int64(le * 1_000_000))))
        }
        buckets.append(("_bucket" + label("le=\"+Inf\""), String(latency.total)))
        buckets.append(("_sum" + label(""), String(Double(latency.sumMicros) / 1_000_000)))
        buckets.append(("_count" + label(""), String(latency.total)))
        metric("answer_latency_seconds", "histogram", "Time from send to APNs's answer.", buckets)
        return out
    }
}
