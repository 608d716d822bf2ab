import Foundation
import Testing
import TestProcessSupport
@testable import APNsMock
@testable import SwiftPushKit

/// Cancellation of the Swift API's waits, and fail-fast when APNs cannot be reached, against
/// the mock over real TLS and HTTP/2 (a server that takes the request and never answers), and a
/// closed loopback port: the wait ends within the bound, and each notification has exactly one
/// outcome, counted in the client's stats.
@Suite("Cancellation and unreachable APNs", .timeLimit(.minutes(5)))
struct CancellationTests {
    /// A token the mock takes and never answers.
    static let stalled = "ab" + String(KitTestSupport.token.dropFirst(2))

    static func stalledNote() -> PushNotification {
        PushNotification(deviceToken: stalled, payload: KitTestSupport.payload, deadline: .seconds(60))
    }

    /// A mock that never answers `stalled`, one stream per connection (a second notification
    /// waits in the client's queue), and a connected client.
    static func stallingServer() async throws -> (MockServer, APNsClient) {
        let server = try KitTestSupport.startMock {
            $0.faults.stallTokens = [stalled]
            $0.maxConcurrentStreams = 1
        }
        let client = try KitTestSupport.client(for: server)
        try await client.waitUntilConnected()
        return (server, client)
    }

    /// Cancels `task` and returns how long it took to end, and how it ended.
    static func cancelAndTime<T: Sendable>(_ task: Task<T, any Error>) async -> (Duration, Result<T, any Error>) {
        let start = ContinuousClock.now
        task.cancel()
        let result = await task.result
        return (ContinuousClock.now - start, result)
    }

    static func isCancellation<T>(_ r: Result<T, any Error>) -> Bool {
        if case .failure(let e) = r { return e is CancellationError }
        return false
    }

    @Test("A cancelled send whose notification was written ends at once with CancellationError; its outcome is still counted, once")
    func cancelWritten() async throws {
        let (server, client) = try await Self.stallingServer()
        defer { server.stop() }
        let task = Task { try await client.send(Self.stalledNote()) }
        #expect(await waitUntil(seconds: 60) { server.stats().stalledRequests == 1 })
        let (took, result) = await Self.cancelAndTime(task)
        print("cancel of a written send: \(took)")
        #expect(Self.isCancellation(result))
        #expect(took < .seconds(10), "took \(took) (the deadline is 60 s; quiet, it takes under 2 ms)")
        #expect(client.stats().inFlight == 1, "written: it stays in flight")
        await client.shutdown(drain: .zero)
        let s = client.stats()
        #expect(s.failed == 1 && s.accepted == 0 && s.rejected == 0, "one outcome (CancelledInFlight at shutdown): \(s)")
    }

    @Test("A cancelled send whose notification waits for a stream ends at once; it is never sent and ends Cancelled, once")
    func cancelQueued() async throws {
        let (server, client) = try await Self.stallingServer()
        defer { server.stop() }
        let first = Task { try await client.send(Self.stalledNote()) }
        #expect(await waitUntil(seconds: 60) { server.stats().stalledRequests == 1 })
        let second = Task { try await client.send(Self.stalledNote()) }
        #expect(await waitUntil(seconds: 60) { client.stats().queued == 1 })
        let (took, result) = await Self.cancelAndTime(second)
        print("cancel of a queued send: \(took)")
        #expect(Self.isCancellation(result))
        #expect(took < .seconds(10), "took \(took) (the deadline is 60 s; quiet, it takes under 2 ms)")
        // Its outcome comes from the client's thread: Cancelled, and the queue is empty, so
        // it can never be written.
        #expect(await waitUntil(seconds: 60) { client.stats().failed == 1 })
        #expect(client.stats().queued == 0 && client.stats().inFlight == 1)
        _ = await Self.cancelAndTime(first)
        await client.shutdown(drain: .zero)
        let s = client.stats()
        #expect(s.failed == 2 && s.accepted == 0 && s.sent == 1, "each once, one written: \(s)")
        #expect(server.stats().stalledRequests == 1)
    }

    @Test("Cancelling the task that iterates a batch ends the iteration at once and cancels what was not written")
    func cancelBatch() async throws {
        let (server, client) = try await Self.stallingServer()
        defer { server.stop() }
        let batch = client.send(contentsOf: Array(repeating: Self.stalledNote(), count: 3))
        #expect(await waitUntil(seconds: 60) { server.stats().stalledRequests == 1 && client.stats().queued == 2 })
        let task = Task { () throws -> Int in
            var n = 0
            for await _ in batch { n += 1 }
            return n
        }
        let (took, result) = await Self.cancelAndTime(task)
        print("cancel of a batch's iteration: \(took)")
        #expect((try? result.get()) == 0)
        #expect(took < .seconds(10), "took \(took) (the deadline is 60 s; quiet, it takes under 2 ms)")
        #expect(await waitUntil(seconds: 60) { client.stats().failed == 2 })
        #expect(client.stats().queued == 0 && client.stats().inFlight == 1)
        await client.shutdown(drain: .zero)
        let s = client.stats()
        #expect(s.failed == 3 && s.sent == 1, "each once: \(s)")
    }

    @Test("A cancelled waitUntilConnected ends at once with CancellationError, as every other wait (the error rule)")
    func cancelWaitUntilConnected() async throws {
        let port = try #require(LoopbackPort.unused())
        var c = KitTestSupport.configuration(port: port)
        c.environment = .custom(host: "127.0.0.1", port: port)
        let client = try APNsClient(configuration: c, logger: KitTestSupport.quiet)
        let task = Task { try await client.waitUntilConnected(timeout: .seconds(60)) }
        let (took, result) = await Self.cancelAndTime(task)
        print("cancel of waitUntilConnected: \(took)")
        #expect(Self.isCancellation(result), "\(result)")
        // Half its timeout: what tells "cancelled" from "timed out". Quiet, it takes under 2 ms;
        // on 2 cores shared with two builds and the suite's other tests it once took 18.6 s.
        #expect(took < .seconds(30), "took \(took) (its timeout is 60 s)")
        await client.shutdown(drain: .zero)
    }

    @Test("Against a closed port, sends end FAILED Unreachable within the configured time, naming the connection error, not at their deadline")
    func unreachable() async throws {
        let port = try #require(LoopbackPort.unused())
        var c = KitTestSupport.configuration(port: port)
        c.environment = .custom(host: "127.0.0.1", port: port)
        c.recovery.unreachableAfter = .milliseconds(500)
        let start = ContinuousClock.now // the client starts connecting as it opens
        let client = try APNsClient(configuration: c, logger: KitTestSupport.quiet)
        let first = try await client.send(PushNotification(deviceToken: KitTestSupport.token, payload: KitTestSupport.payload, deadline: .seconds(60)))
        let took = ContinuousClock.now - start
        print("Unreachable after \(took) (limit 500 ms)")
        #expect(first.outcome == .failed && first.reason == .unreachable, "\(first)")
        #expect(first.detail.contains("refused"), "\(first.detail)")
        // The upper bound only shows it was not the 60 s deadline: alone it takes 0.6 s, under
        // AddressSanitizer with the other suites on 2 cores it took over 10 s (make test-asan).
        // The reason checked above is what tells Unreachable from the deadline's QueueTimeout.
        #expect(took >= .milliseconds(450) && took < .seconds(45), "took \(took)")
        // Later sends end at once while it stays unreachable.
        let again = ContinuousClock.now
        let second = try await client.send(PushNotification(deviceToken: KitTestSupport.token, payload: KitTestSupport.payload, deadline: .seconds(60)))
        let tookAgain = ContinuousClock.now - again
        print("next send Unreachable after \(tookAgain)")
        #expect(second.reason == .unreachable && tookAgain < .seconds(30), "took \(tookAgain) (its deadline is 60 s)")
        await client.shutdown(drain: .zero)
        #expect(client.stats().failed == 2)
    }
}
