import Foundation
import Testing
import CSwiftPushABI
import PushCore
@testable import APNsMock
@testable import PushClientCore

/// The client against the mock APNs server in the same process, over real TLS + HTTP/2 on
/// loopback: the stream-limit rules and exactly-once outcomes, checked against the mock's own
/// counters.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct PushClientMockTests {
    let support = ClientTestSupport()
    @Test("A connection starts at one stream and opens up to the server's raised limit; every notification is accepted once")
    func streamLimitGrowsAndEveryNotificationIsAcceptedOnce() throws {
        let server = try support.startMock(maxStreams: 1000)
        defer { server.stop() }
        let client = try support.makeClient(port: server.port)
        #expect(client.waitUntilConnected(timeoutMillis: 5000) == nil)
        let results = support.sendAll(client, count: 20_000)
        client.close(drainMillis: 1000)

        #expect(results.count == 20_000)
        #expect(Set(results.map(\.tag)).count == 20_000, "no duplicates")
        #expect(results.allSatisfy { $0.outcome == 1 && $0.status == 200 })
        let stats = server.stats()
        #expect(stats.accepted == 20_000, "the mock processed each exactly once")
        #expect(stats.refusedStreams == 0, "never more streams than allowed")
        #expect(stats.peakConcurrentStreams > 1, "the limit opened up after the first success")
        #expect(stats.peakConcurrentStreams <= 1000)
    }

    @Test("A server that keeps its limit at 10 streams is never sent more than 10 at once")
    func aLowServerLimitIsRespected() throws {
        let server = try support.startMock(maxStreams: 10)
        defer { server.stop() }
        let client = try support.makeClient(port: server.port)
        let results = support.sendAll(client, count: 2_000)
        client.close(drainMillis: 1000)
        #expect(results.count == 2_000)
        #expect(results.allSatisfy { $0.outcome == 1 })
        let stats = server.stats()
        #expect(stats.refusedStreams == 0)
        #expect(stats.peakConcurrentStreams <= 10)
    }

    @Test("A pool of 4 connections carries the load and opens 4 connections")
    func aPoolOfFourConnections() throws {
        let server = try support.startMock()
        defer { server.stop() }
        let client = try support.makeClient(port: server.port, connections: 4)
        let results = support.sendAll(client, count: 10_000)
        client.close(drainMillis: 1000)
        #expect(results.count == 10_000)
        #expect(results.allSatisfy { $0.outcome == 1 })
        #expect(server.stats().connections == 4)
    }

    @Test("A self-sizing pool opens connections while every stream is busy, up to the maximum, and closes them when demand is gone")
    func selfSizingPool() throws {
        // 5 streams per connection and answers 100 ms late: one connection carries 50/s, so
        // 300 notifications keep the pool the limit until it has grown to its maximum of 4.
        let server = try support.startMock { $0.faults.responseDelayMillis = 100 }
        defer { server.stop() }
        let client = try support.makeClient(port: server.port, connections: 4) {
            $0.pool.maxStreamsPerConnection = 5
            $0.pool.minConnections = 1
            $0.pool.shrinkWindowMillis = 300
        }
        defer { client.close(drainMillis: 0) }
        #expect(client.waitUntilConnected(timeoutMillis: 5000) == nil)
        #expect(waitUntil(seconds: 5) { client.stats().connections_open == 1 })
        #expect(server.stats().connections == 1, "starts at the minimum")
        let results = support.sendAll(client, count: 300)
        #expect(results.count == 300)
        #expect(results.allSatisfy { $0.outcome == 1 })
        #expect(Set(results.map(\.tag)).count == 300, "one result per notification")
        #expect(server.stats().connections == 4, "grew to the maximum, and no further")
        // Idle now: one connection goes per quiet window (300 ms), down to the minimum.
        #expect(waitUntil(seconds: 10) { client.stats().connections_open == 1 })
        #expect(server.stats().connections == 4, "shrinking opens nothing")
    }

    @Test("Connecting to a port where nothing listens times out with the connection error")
    func nothingListening() throws {
        let server = try support.startMock()
        let port = server.port
        server.stop()
        let client = try support.makeClient(port: port)
        defer { client.close(drainMillis: 0) }
        let error = client.waitUntilConnected(timeoutMillis: 300)
        #expect(error?.status == .timeout)
        #expect(error?.description.contains("refused") == true, "\(error?.description ?? "")")
    }
}
