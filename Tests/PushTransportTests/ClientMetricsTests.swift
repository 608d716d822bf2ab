import Testing
import PushCore
@testable import PushClientCore

/// The Prometheus text of a client's figures, and the allocation-free outcome counters behind it.
@Suite("Client metrics", .timeLimit(.minutes(5)))
struct ClientMetricsTests {
    @Test("Outcome counts: recorded per (outcome, reason), drained into the shared table, unknown codes in one column")
    func outcomeCounts() {
        var local = OutcomeCounts()
        var shared = OutcomeCounts()
        for _ in 0..<3 { local.record(outcome: 1, reason: 0) }
        local.record(outcome: 2, reason: APNsReason.badDeviceToken.rawValue)
        local.record(outcome: 3, reason: APNsReason.unknown.rawValue)
        local.record(outcome: 3, reason: 5000)
        local.record(outcome: 9, reason: 0) // not an outcome: ignored
        shared.drain(&local)
        #expect(local.byKey().isEmpty, "drained")
        local.record(outcome: 1, reason: 0)
        shared.drain(&local)
        let counts = shared.byKey()
        #expect(counts[.init(outcome: 1, reason: 0)] == 4)
        #expect(counts[.init(outcome: 2, reason: APNsReason.badDeviceToken.rawValue)] == 1)
        #expect(counts[.init(outcome: 3, reason: 1000)] == 2)
        #expect(counts.count == 3)
    }

    @Test("Prometheus text: HELP and TYPE for each metric, labelled samples, a cumulative histogram with +Inf, _sum and _count")
    func prometheusText() {
        var m = ClientMetrics()
        m.outcomes = [.init(outcome: 1, reason: 0): 7, .init(outcome: 2, reason: APNsReason.unregistered.rawValue): 2]
        m.counters.sent = 10
        m.connectionsOpen = 2
        m.queued = 3
        for micros in [500, 20_000, 20_000, 3_000_000] { m.latency.record(micros: Int64(micros)) }
        let text = m.prometheusText(labels: "app=\"news\"")
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines.contains("# TYPE swiftpush_notifications_total counter"))
        #expect(lines.contains("swiftpush_notifications_total{app=\"news\",outcome=\"accepted\",reason=\"None\"} 7"))
        #expect(lines.contains("swiftpush_notifications_total{app=\"news\",outcome=\"rejected\",reason=\"Unregistered\"} 2"))
        #expect(lines.contains("swiftpush_writes_total{app=\"news\"} 10"))
        #expect(lines.contains("swiftpush_connections{app=\"news\",state=\"open\"} 2"))
        #expect(lines.contains("swiftpush_queued{app=\"news\"} 3"))
        #expect(lines.contains("# TYPE swiftpush_answer_latency_seconds histogram"))
        #expect(lines.contains("swiftpush_answer_latency_seconds_bucket{app=\"news\",le=\"0.001\"} 1"))
        #expect(lines.contains("swiftpush_answer_latency_seconds_bucket{app=\"news\",le=\"0.025\"} 3"))
        #expect(lines.contains("swiftpush_answer_latency_seconds_bucket{app=\"news\",le=\"+Inf\"} 4"))
        #expect(lines.contains("swiftpush_answer_latency_seconds_count{app=\"news\"} 4"))
        #expect(lines.contains("swiftpush_answer_latency_seconds_sum{app=\"news\"} 3.0405"))
        // Cumulative: every bucket at least the one before it.
        let buckets = lines.filter { $0.hasPrefix("swiftpush_answer_latency_seconds_bucket") }.compactMap { UInt64($0.split(separator: " ").last!) }
        #expect(buckets == buckets.sorted())
        // Without labels, samples carry only their own.
        #expect(ClientMetrics().prometheusText().contains("\nswiftpush_writes_total 0\n"))
        // Every sample line is "name{labels} value" or "name value".
        for line in lines where !line.hasPrefix("#") {
            #expect(line.split(separator: " ").count == 2, "\(line)")
        }
    }

    @Test("Several labelled clients on one page: each family's HELP and TYPE once, every client's samples under it")
    func severalClients() {
        var a = ClientMetrics(), b = ClientMetrics()
        a.counters.sent = 3
        b.counters.sent = 4
        let text = ClientMetrics.prometheusText([("app=\"a\"", a), ("app=\"b\"", b)])
        #expect(text.components(separatedBy: "# TYPE swiftpush_writes_total counter").count == 2, "one TYPE line")
        #expect(text.contains("swiftpush_writes_total{app=\"a\"} 3\nswiftpush_writes_total{app=\"b\"} 4\n"))
        #expect(text.contains("swiftpush_answer_latency_seconds_count{app=\"b\"} 0\n"))
    }

    @Test("Adding two threads' figures sums counters, gauges and histograms")
    func add() {
        var a = ClientMetrics(), b = ClientMetrics()
        a.outcomes = [.init(outcome: 1, reason: 0): 2]
        b.outcomes = [.init(outcome: 1, reason: 0): 3, .init(outcome: 3, reason: 34): 1]
        a.inFlight = 4; b.inFlight = 5
        a.latency.record(micros: 10); b.latency.record(micros: 20)
        a.add(b)
        #expect(a.outcomes[.init(outcome: 1, reason: 0)] == 5 && a.outcomes.count == 2)
        #expect(a.inFlight == 9 && a.latency.total == 2 && a.latency.sumMicros == 30)
    }
}
