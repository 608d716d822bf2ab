#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import APNsMock
@testable import SwiftPushKit

/// The host-thread interface (`APNsEngine`): non-blocking submission of tagged batches with
/// back-pressure, results taken with their tags and a timeout, the readiness descriptor.
/// Its calls block the calling thread by design, hence one test at a time.
@Suite("Host-thread engine", .serialized, .timeLimit(.minutes(5)))
struct EngineTests {
    func engine(for server: MockServer, _ configure: (inout APNsConfiguration) -> Void = { _ in }) throws -> APNsEngine {
        var c = KitTestSupport.configuration(port: server.port)
        configure(&c)
        return try APNsEngine(configuration: c, logger: KitTestSupport.quiet)
    }

    static func tagged(_ count: Int, from first: UInt64 = 0, token: String = KitTestSupport.token) -> [TaggedNotification] {
        let note = PushNotification(deviceToken: token, payload: KitTestSupport.payload)
        return (0..<count).map { TaggedNotification(tag: first + UInt64($0), notification: note) }
    }

    @Test("Every submitted notification comes back once with its tag; nothing is taken when nothing waits")
    func tagsComeBack() throws {
        let server = try KitTestSupport.startMock()
        defer { server.stop() }
        let engine = try engine(for: server)
        try engine.waitUntilConnected(timeout: .seconds(10))
        var results: [TaggedResult] = []
        #expect(engine.take(into: &results, timeout: .zero) == .timedOut && results.isEmpty)
        let batch = Self.tagged(2000, from: 1 << 40)
        var next = batch[...]
        var tags: [UInt64] = []
        while tags.count < 2000 {
            if !next.isEmpty { next = next.dropFirst(engine.submit(next).accepted) }
            if case .results = engine.take(into: &results, max: 512, timeout: .seconds(5)) {
                tags += results.map(\.tag)
                #expect(results.allSatisfy { $0.result.outcome == .accepted })
                results.removeAll(keepingCapacity: true)
            } else {
                break
            }
        }
        #expect(tags.count == 2000 && Set(tags) == Set(batch.map(\.tag)))
        engine.close(drain: .seconds(5))
        #expect(engine.take(into: &results, timeout: .seconds(1)) == .finished)
        #expect(engine.submit(Self.tagged(1)).error?.code == .closed)
    }

    @Test("A full client takes a prefix and says .queueFull; an invalid notification stops the batch at its index with its rule")
    func backPressureAndRefusals() throws {
        let stalled = "0c" + String(KitTestSupport.token.dropFirst(2))
        let server = try KitTestSupport.startMock { $0.faults.stallTokens = [stalled] }
        defer { server.stop() }
        let engine = try engine(for: server) { $0.pool.queueCapacity = 16 }
        let full = engine.submit(Self.tagged(40, token: stalled))
        #expect(full.accepted == 16 && full.error?.code == .queueFull, "\(full)")
        engine.close(drain: .zero)
        var results: [TaggedResult] = []
        var taken = 0
        while case .results(let n) = engine.take(into: &results, timeout: .seconds(5)) { taken += n }
        #expect(taken == 16 && results.allSatisfy { $0.result.outcome == .failed })

        let server2 = try KitTestSupport.startMock()
        defer { server2.stop() }
        let engine2 = try self.engine(for: server2)
        var batch = Self.tagged(5)
        batch[2].notification.destination = .device(token: "xyz")
        let r = engine2.submit(batch)
        #expect(r.accepted == 2 && r.error?.code == .badDeviceToken)
        #expect(engine2.submit(batch[3...]).accepted == 2)
        engine2.close(drain: .seconds(5))
        results = []
        while case .results = engine2.take(into: &results, timeout: .seconds(5)) {}
        #expect(Set(results.map(\.tag)) == [0, 1, 3, 4])
    }

    @Test("The readiness descriptor turns readable when results wait, and quiet once they are taken")
    func readinessDescriptor() throws {
        let server = try KitTestSupport.startMock()
        defer { server.stop() }
        let engine = try engine(for: server)
        let fd = try engine.readinessDescriptor()
        var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        #expect(poll(&pfd, 1, 0) == 0)
        #expect(engine.submit(Self.tagged(3)).accepted == 3)
        #expect(poll(&pfd, 1, 10_000) == 1) // waits for the results, signalled
        var results: [TaggedResult] = []
        while results.count < 3 {
            guard case .results = engine.take(into: &results, timeout: .seconds(5)) else { break }
        }
        #expect(results.count == 3)
        #expect(poll(&pfd, 1, 0) == 0)
        engine.close(drain: .seconds(5))
    }

    @Test("Stats count what the engine did")
    func stats() throws {
        let server = try KitTestSupport.startMock()
        defer { server.stop() }
        let engine = try engine(for: server)
        #expect(engine.submit(Self.tagged(10)).accepted == 10)
        engine.close(drain: .seconds(5))
        let s = engine.stats()
        #expect(s.accepted == 10 && s.sent == 10 && s.untaken == 10 && s.connectionsStarted >= 1)
        #expect(engine.prometheusText().contains("swiftpush_notifications_total{outcome=\"accepted\",reason=\"None\"} 10"))
    }
}
