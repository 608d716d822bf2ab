import CoreMetrics
import Foundation
import InMemoryLogging
import Logging
import MetricsTestKit
import Testing
@testable import APNsMock
@testable import SwiftPushKit

/// swift-log and swift-metrics: the client's Logger receives the library's events with levels
/// and metadata and never a secret; results are counted and timed per outcome and reason
/// through the global MetricsSystem.
@Suite("Logging and metrics", .serialized, .timeLimit(.minutes(5)))
struct ObservabilityTests {
    /// The process's metrics backend for these tests (the MetricsSystem is bootstrapped once).
    static let metrics: TestMetrics = {
        let m = TestMetrics()
        MetricsSystem.bootstrap(m)
        return m
    }()

    @Test("The Logger gets the client's events at their levels with the event's name, and no key, token, JWT or payload")
    func loggerReceivesEventsWithoutSecrets() async throws {
        let gone = "0b" + String(KitTestSupport.token.dropFirst(2))
        let server = try KitTestSupport.startMock { $0.faults.unregisteredTokens = [gone: 1] }
        defer { server.stop() }
        let handler = InMemoryLogHandler()
        var logger = Logger(label: "swiftpush-test", factory: { _ in handler })
        logger.logLevel = .trace
        logger[metadataKey: "request"] = "r-1"
        let client = try KitTestSupport.client(for: server, logger: logger)
        let payload = PushPayload(json: #"{"aps":{"alert":"a very private message"}}"#)
        _ = try await client.send(PushNotification(deviceToken: KitTestSupport.token, payload: payload))
        _ = try await client.send(PushNotification(deviceToken: gone, payload: payload))
        await client.shutdown()
        let entries = handler.entries
        let events = entries.compactMap { $0.metadata["swiftpush.event"].map { "\($0)" } }
        #expect(events.contains("connection.connecting") && events.contains("connection.ready") && events.contains("connection.closed"), "\(events)")
        let ready = try #require(entries.first { $0.metadata["swiftpush.event"] == "connection.ready" })
        #expect(ready.level == .info && ready.metadata["request"] == "r-1")
        #expect(entries.contains { $0.level == .debug && $0.metadata["swiftpush.event"] == "connection.connecting" })
        // Per result, at trace: the apns-id and the outcome, never the token.
        #expect(entries.contains { $0.level == .trace && $0.metadata["swiftpush.reason"] == "Unregistered" })
        let key = try String(contentsOfFile: KitTestSupport.pki + "/AuthKey_TESTKEY001.p8", encoding: .utf8)
        let keyLines = key.split(separator: "\n").filter { !$0.hasPrefix("-----") }
        for e in entries {
            let text = "\(e.message) \(e.metadata)"
            #expect(!text.contains(KitTestSupport.token) && !text.contains(gone), "a device token in \(text)")
            #expect(!text.contains("private message"), "the payload in \(text)")
            #expect(!text.contains("eyJ"), "a JWT in \(text)")
            #expect(!keyLines.contains { text.contains($0) }, "the key in \(text)")
        }
    }

    @Test("A Logger at warning builds no debug or info event")
    func loggerLevelFilters() async throws {
        let server = try KitTestSupport.startMock()
        defer { server.stop() }
        let handler = InMemoryLogHandler()
        var logger = Logger(label: "swiftpush-test", factory: { _ in handler })
        logger.logLevel = .warning
        let client = try KitTestSupport.client(for: server, logger: logger)
        _ = try await client.send(PushNotification(deviceToken: KitTestSupport.token, payload: KitTestSupport.payload))
        await client.shutdown()
        #expect(handler.entries.allSatisfy { $0.level >= .warning }, "\(handler.entries)")
    }

    @Test("Results are counted and timed per outcome and reason, with the configuration's dimensions")
    func metricsPerOutcomeAndReason() async throws {
        let metrics = Self.metrics
        let gone = "0b" + String(KitTestSupport.token.dropFirst(2))
        let server = try KitTestSupport.startMock { $0.faults.unregisteredTokens = [gone: 1] }
        defer { server.stop() }
        let run = UUID().uuidString
        let client = try KitTestSupport.client(for: server) { $0.metricsDimensions = [("run", run)] }
        var notes = KitTestSupport.notifications(30)
        for i in 0..<5 { notes[i] = PushNotification(deviceToken: gone, payload: KitTestSupport.payload) }
        _ = await KitTestSupport.collect(client.send(contentsOf: notes))
        await client.shutdown()
        let accepted = [("outcome", "accepted"), ("reason", "None"), ("run", run)]
        let unregistered = [("outcome", "rejected"), ("reason", "Unregistered"), ("run", run)]
        #expect(metrics.counterTotal(label: "swiftpush_notifications_total", dimensions: accepted) == 25)
        #expect(metrics.counterTotal(label: "swiftpush_notifications_total", dimensions: unregistered) == 5)
        let timer = try metrics.expectTimer("swiftpush_notification_latency", accepted)
        #expect(timer.values.count == 25 && timer.values.allSatisfy { $0 > 0 })
        #expect(try metrics.expectTimer("swiftpush_notification_latency", unregistered).values.count == 5)
    }
}
