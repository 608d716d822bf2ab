import Foundation
import Testing
import TestProcessSupport
import CSwiftPushABI
import PushCore
@testable import APNsMock
@testable import PushClientCore
@testable import PushTransport

/// A resolver the test controls: the first `freeCalls` answers come at once, later calls block
/// until `release()`. Answers are `addresses(port)` (127.0.0.1 with the mock's port by default).
final class GatedResolver: AddressResolver, @unchecked Sendable {
    private let lock = NSCondition()
    private var calls = 0
    private var released = false
    let freeCalls: Int
    let addresses: @Sendable (Int) throws(TransportError) -> [SocketConnect.Address]

    init(freeCalls: Int, addresses: @escaping @Sendable (Int) throws(TransportError) -> [SocketConnect.Address] = { port throws(TransportError) in
        try SystemResolver().resolve(host: "127.0.0.1", port: port)
    }) {
        self.freeCalls = freeCalls
        self.addresses = addresses
    }

    var callCount: Int { lock.lock(); defer { lock.unlock() }; return calls }

    func release() {
        lock.lock()
        released = true
        lock.broadcast()
        lock.unlock()
    }

    /// Waits (on the condition, not a sleep) until `resolve` has been called `n` times.
    func waitForCalls(_ n: Int, timeoutSeconds: Double = 10) -> Bool {
        let until = Date().addingTimeInterval(timeoutSeconds)
        lock.lock()
        defer { lock.unlock() }
        while calls < n { if !lock.wait(until: until) { return false } }
        return true
    }

    func resolve(host: String, port: Int) throws(TransportError) -> [SocketConnect.Address] {
        lock.lock()
        calls += 1
        lock.broadcast()
        let free = calls <= freeCalls
        while !free && !released { lock.wait() }
        lock.unlock()
        return try addresses(port)
    }
}

/// Name resolution runs off the I/O thread (issue 12, item 3).
@Suite("Resolving off the I/O thread", .timeLimit(.minutes(5)))
struct ResolverTests {
    let support = ClientTestSupport()

    @Test("While a replacement connection's name resolution hangs, the other connection keeps carrying notifications")
    func slowResolverDoesNotStallOtherConnections() throws {
        var faults = MockFaults()
        faults.killConnectionAfterRequests = 30
        let server = try support.startMock { $0.faults = faults }
        defer { server.stop() }
        let resolver = GatedResolver(freeCalls: 1)
        defer { resolver.release() }
        let client = try support.makeClient(port: server.port, connections: 2) { $0.endpoint.resolver = resolver }
        defer { client.close(drainMillis: 0) }
        #expect(client.waitUntilConnected(timeoutMillis: 5000) == nil)
        // One at a time: each goes to the first connection of the pool with room, and the mock
        // kills a connection after its 30th answer. (Usually the first connection takes them
        // all; when the second came up first, it took the first few: hence up to 60 sends.)
        var sent = 0
        while sent < 60 && resolver.callCount < 2 {
            #expect(support.send(client, count: 1, firstTag: sent).accepted == 1)
            #expect(support.collect(client, count: 1).first?.outcome == 1)
            sent += 1
            if sent >= 30 { _ = resolver.waitForCalls(2, timeoutSeconds: 0.2) }
        }
        // Its replacement waits for a resolution that hangs...
        #expect(resolver.waitForCalls(2), "the replacement asked for the name")
        // ...and the other connection goes on: sends, answers, results.
        for tag in sent..<(sent + 20) {
            #expect(support.send(client, count: 1, firstTag: tag).accepted == 1)
            let r = support.collect(client, count: 1).first
            #expect(r?.outcome == 1, "\(r?.reasonText ?? "no result")")
        }
        #expect(resolver.callCount == 2, "still waiting on the hung resolution")
    }

    @Test("A resolution that hangs past the connect timeout counts as a failed attempt; deadlines and close are not held up")
    func hungResolverTimesOut() throws {
        let server = try support.startMock()
        defer { server.stop() }
        let resolver = GatedResolver(freeCalls: 0)
        defer { resolver.release() }
        let client = try support.makeClient(port: server.port, connections: 1) {
            $0.endpoint.resolver = resolver
            $0.timing.connectTimeoutMillis = 300
            $0.timing.deadlineMillis = 1000
        }
        let waitError = client.waitUntilConnected(timeoutMillis: 3000)
        #expect(waitError?.status == .timeout)
        #expect(waitError?.description.contains("resolving localhost took longer than 300 ms") == true, "\(waitError?.description ?? "")")
        #expect(support.send(client, count: 5).accepted == 5)
        let results = support.collect(client, count: 5, idleMillis: 5000)
        #expect(results.count == 5 && results.allSatisfy { $0.outcome == 3 && $0.reason == PUSH_REASON_QUEUE_TIMEOUT.rawValue },
                "deadlines are enforced while the resolver hangs")
        #expect(results.first?.reasonText.contains("resolving localhost") == true, "\(results.first?.reasonText ?? "")")
        #expect(client.close(drainMillis: 0), "close returns with the resolver still hung")
    }

    @Test("When the first address refuses the TCP connect, the next address of the same answer is tried at once, without back-off")
    func nextAddressBeforeBackoff() throws {
        let server = try support.startMock()
        defer { server.stop() }
        // A port nobody listens on first (connection refused), then the mock.
        let closedPort = try #require(LoopbackPort.unused())
        let resolver = GatedResolver(freeCalls: 100) { port throws(TransportError) in
            try SystemResolver().resolve(host: "127.0.0.1", port: closedPort) + SystemResolver().resolve(host: "127.0.0.1", port: port)
        }
        let client = try support.makeClient(port: server.port, connections: 1) { $0.endpoint.resolver = resolver }
        defer { client.close(drainMillis: 0) }
        #expect(client.waitUntilConnected(timeoutMillis: 5000) == nil)
        #expect(!client.reconnect.isBackingOff, "a refused address with another to try is not a failure")
        #expect(support.sendAll(client, count: 10).allSatisfy { $0.outcome == 1 })
        #expect(client.stats().connections_started == 2)
    }
}
