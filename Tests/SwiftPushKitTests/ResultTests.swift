import Foundation
import Testing
import TestProcessSupport
@testable import APNsMock
@testable import SwiftPushKit

/// Every kind of outcome, as the Swift API's values: accepted, rejected (410 with its
/// timestamp; a reason not in the table, its text kept), failed (no answer within the
/// deadline), and the per-notification deadline.
@Suite("Results", .timeLimit(.minutes(5)))
struct ResultTests {
    static let gone = "0b" + String(KitTestSupport.token.dropFirst(2))
    static let silent = "0c" + String(KitTestSupport.token.dropFirst(2))

    @Test("410 Unregistered is rejected with its reason, status and timestamp")
    func unregisteredWithTimestamp() async throws {
        let server = try KitTestSupport.startMock { $0.faults.unregisteredTokens = [Self.gone: 1_700_000_000_123] }
        defer { server.stop() }
        let client = try KitTestSupport.client(for: server)
        let r = try await client.send(PushNotification(deviceToken: Self.gone, payload: KitTestSupport.payload))
        #expect(r.outcome == .rejected && r.status == 410)
        #expect(r.reason == .unregistered && r.reason?.text == "Unregistered" && r.reason?.isKnown == true)
        #expect(r.timestamp == 1_700_000_000_123)
        #expect(r.attempts == 1)
        await client.shutdown()
    }

    @Test("A rejection APNs gives for a bad request keeps its reason and no timestamp")
    func rejectedByValidation() async throws {
        let server = try KitTestSupport.startMock { $0.allowedTopics = ["com.example.app"] }
        defer { server.stop() }
        let client = try KitTestSupport.client(for: server)
        let r = try await client.send(PushNotification(deviceToken: KitTestSupport.token, payload: KitTestSupport.payload,
                                                       topic: "com.example.other"))
        #expect(r.outcome == .rejected && r.status == 400 && r.reason == .topicDisallowed && r.timestamp == nil)
        #expect(r.detail == "TopicDisallowed")
        await client.shutdown()
    }

    @Test("A reason that is not in the table is kept with its text (a server that adds a reason)")
    func unknownReasonKeepsItsText() async throws {
        let server = try ReasonServer(status: 400, reason: "SomethingNew")
        defer { server.stop() }
        var c = KitTestSupport.configuration(port: server.port)
        c.recovery.maxAttempts = 1
        let client = try APNsClient(configuration: c, logger: KitTestSupport.quiet)
        let r = try await client.send(PushNotification(deviceToken: KitTestSupport.token, payload: KitTestSupport.payload))
        #expect(r.outcome == .rejected && r.status == 400)
        #expect(r.reason?.isKnown == false && r.reason?.text == "SomethingNew" && r.reason?.description == "SomethingNew")
        #expect(r.reason != PushReason(text: "SomethingElse") && r.reason == PushReason(text: "SomethingNew"))
        await client.shutdown()
    }

    @Test("No answer within a notification's own deadline: FAILED Timeout, while the client's deadline is a minute")
    func perNotificationDeadline() async throws {
        let server = try KitTestSupport.startMock { $0.faults.stallTokens = [Self.silent] }
        defer { server.stop() }
        let client = try KitTestSupport.client(for: server)
        // A first, accepted one raises the mock's stream limit above 1.
        #expect(try await client.send(PushNotification(deviceToken: KitTestSupport.token, payload: KitTestSupport.payload)).outcome == .accepted)
        let started = ContinuousClock.now
        let r = try await client.send(PushNotification(deviceToken: Self.silent, payload: KitTestSupport.payload, deadline: .milliseconds(300)))
        let took = ContinuousClock.now - started
        #expect(r.outcome == .failed && r.status == 0 && r.reason == .timeout, "\(r)")
        #expect(r.detail == "no answer within the deadline")
        #expect(r.latency >= .milliseconds(300) && took < .seconds(30), "latency \(r.latency), took \(took)")
        await client.shutdown()
    }

    @Test("send(_:deadline:) and send(contentsOf:deadline:): the call's deadline ends an unanswered notification Timeout; one of the notification's own is kept in a batch")
    func callDeadline() async throws {
        let server = try KitTestSupport.startMock { $0.faults.stallTokens = [Self.silent] }
        defer { server.stop() }
        let client = try KitTestSupport.client(for: server)
        #expect(try await client.send(PushNotification(deviceToken: KitTestSupport.token, payload: KitTestSupport.payload)).outcome == .accepted)
        var started = ContinuousClock.now
        // The call's deadline replaces the notification's 60 s one.
        let r = try await client.send(PushNotification(deviceToken: Self.silent, payload: KitTestSupport.payload, deadline: .seconds(60)),
                                      deadline: .milliseconds(200))
        var took = ContinuousClock.now - started
        #expect(r.outcome == .failed && r.reason == .timeout, "\(r)")
        // 200 ms, the 50 ms scan and a loaded machine: far from the client's 60 s.
        #expect(took >= .milliseconds(200) && took < .seconds(10), "took \(took)")
        started = ContinuousClock.now
        let notes = [PushNotification(deviceToken: Self.silent, payload: KitTestSupport.payload),
                     PushNotification(deviceToken: KitTestSupport.token, payload: KitTestSupport.payload),
                     PushNotification(deviceToken: Self.silent, payload: KitTestSupport.payload, deadline: .milliseconds(400))]
        let all = await KitTestSupport.collect(client.send(contentsOf: notes, deadline: .milliseconds(200)))
        took = ContinuousClock.now - started
        let byIndex = Dictionary(uniqueKeysWithValues: all.map { ($0.index, $0.value) })
        #expect(byIndex[0]??.reason == .timeout && byIndex[1]??.outcome == .accepted && byIndex[2]??.reason == .timeout, "\(all)")
        // The first could only end this soon by the call's deadline; the last kept its own.
        #expect(byIndex[2]??.latency ?? .zero >= .milliseconds(400), "\(all)")
        #expect(took >= .milliseconds(400) && took < .seconds(10), "took \(took)")
        await client.shutdown()
    }

    @Test("Closing without a drain cancels what is in flight: every notification still gets exactly one result")
    func cancelledAtClose() async throws {
        let server = try KitTestSupport.startMock { $0.faults.stallTokens = [Self.silent] }
        defer { server.stop() }
        let client = try KitTestSupport.client(for: server) { $0.pool.queueCapacity = 16 }
        let results = client.send(contentsOf: KitTestSupport.notifications(100, token: Self.silent))
        #expect(await waitUntil(seconds: 10) { server.stats().stalledRequests >= 1 })
        await client.shutdown(drain: .zero)
        let all = await KitTestSupport.collect(results)
        #expect(all.count == 100 && Set(all.map(\.index)).count == 100)
        let cancelled = all.compactMap(\.value).filter { $0.outcome == .failed && ($0.reason == .cancelled || $0.reason == .cancelledInFlight) }
        let refused = all.compactMap(\.error).filter { $0.code == .closed }
        #expect(cancelled.count + refused.count == 100, "\(cancelled.count) cancelled, \(refused.count) refused")
        #expect(cancelled.contains { $0.reason == .cancelledInFlight })
        await #expect(throws: PushError.self) { try await client.send(PushNotification(deviceToken: KitTestSupport.token, payload: KitTestSupport.payload)) }
    }
}

/// `Tests/support/reason_server.py`: answers every request with one status and reason.
final class ReasonServer {
    let process: ChildProcess
    let port: Int
    let directory: String

    init(status: Int, reason: String) throws {
        directory = NSTemporaryDirectory() + "swiftpushkit-reason-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        process = try ChildProcess("/usr/bin/env", ["python3", KitTestSupport.root.appendingPathComponent("Tests/support/reason_server.py").path,
                                                    directory + "/port", "--cert", KitTestSupport.pki + "/server.pem", "--key", KitTestSupport.pki + "/server.key",
                                                    "--status", String(status), "--reason", reason, "--lifetime", "60"], stderr: .inherited)
        let (dir, script) = (directory, process)
        var found: Int?
        waitUntilBlocking(seconds: 10) {
            found = TestFiles.readText(dir + "/port").flatMap { Int($0) }
            return found != nil || !script.isRunning
        }
        guard let found else {
            process.kill()
            throw PushError(.internalError, "reason_server.py did not start")
        }
        port = found
    }

    /// Stops it with SIGKILL (a child may inherit a blocked SIGTERM from the test runner).
    func stop() {
        process.kill()
        try? FileManager.default.removeItem(atPath: directory)
    }
}
