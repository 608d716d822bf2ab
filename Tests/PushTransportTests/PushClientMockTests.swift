import Foundation
import Testing
import CSwiftPushABI
import PushCore
@testable import APNsMock
@testable import PushTransport

/// The client against the mock APNs server in the same process, over real TLS + HTTP/2 on
/// loopback: the stream-limit rules and exactly-once outcomes, checked against the mock's own
/// counters.
@Suite(.serialized)
struct PushClientMockTests {
    static let token = "00fc13adff785122b4ad28809a3420982341241421348097878e577c991de8f0"
    static let payload = #"{"aps":{"alert":"hello"}}"#

    /// The test keys and certificates, made once.
    static let pki: String = {
        let dir = NSTemporaryDirectory() + "swiftpush-client-tests-\(getpid())"
        let script = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("scripts/make-test-pki.sh").path
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/bash")
        p.arguments = [script, dir]
        p.standardOutput = FileHandle.nullDevice
        try? p.run()
        p.waitUntilExit()
        precondition(p.terminationStatus == 0, "make-test-pki.sh failed")
        return dir
    }()

    func startMock(maxStreams: Int = 1000) throws -> MockServer {
        var c = MockServer.Configuration(certificateChainFile: Self.pki + "/server.pem", privateKeyFile: Self.pki + "/server.key")
        c.tokenKeys = [try MockServer.TokenKey(keyID: "TESTKEY001", teamID: "TEAM123456", file: Self.pki + "/AuthKey_TESTKEY001.pub.pem")]
        c.maxConcurrentStreams = maxStreams
        let server = MockServer(configuration: c)
        try server.start()
        return server
    }

    func makeClient(port: Int, connections: Int = 1) throws -> PushClient {
        var c = ClientConfiguration()
        c.host = "localhost"
        c.port = port
        c.caFile = Self.pki + "/ca.pem"
        c.tokenKeyPEM = try FileBytes.read(path: Self.pki + "/AuthKey_TESTKEY001.p8", limit: 65536)
        c.keyID = "TESTKEY001"
        c.teamID = "TEAM123456"
        c.defaultTopic = Array("com.example.app".utf8)
        c.connections = connections
        return try PushClient(configuration: c)
    }

    /// Sends `count` notifications (tags 0..<count) and collects every result.
    func sendAll(_ client: PushClient, count: Int) -> [push_result] {
        var results: [push_result] = []
        Self.token.withCString { token in
            Self.payload.withCString { payload in
                var batch = [push_notification](repeating: push_notification(), count: 500)
                var sent = 0
                var idle = 0
                while results.count < count && idle < 50 {
                    if sent < count {
                        let n = min(500, count - sent)
                        for i in 0..<n {
                            batch[i] = push_notification()
                            batch[i].device_token = token
                            batch[i].payload = payload
                            batch[i].tag = UInt64(sent + i)
                        }
                        let r = batch.withUnsafeBufferPointer { client.send($0.baseAddress!, count: n, timeoutMillis: 1000) }
                        sent += r.accepted
                    }
                    var page = [push_result](repeating: push_result(), count: 1000)
                    let got = page.withUnsafeMutableBytes {
                        client.poll(into: $0.baseAddress!, max: 1000, recordSize: MemoryLayout<push_result>.stride,
                                    timeoutMillis: sent == count ? 100 : 0).count
                    }
                    idle = (got == 0 && sent == count) ? idle + 1 : 0
                    results.append(contentsOf: page.prefix(got))
                }
            }
        }
        return results
    }

    @Test("A connection starts at one stream and opens up to the server's raised limit; every notification is accepted once")
    func streamLimitGrowsAndEveryNotificationIsAcceptedOnce() throws {
        let server = try startMock(maxStreams: 1000)
        defer { server.stop() }
        let client = try makeClient(port: server.port)
        #expect(client.waitUntilConnected(timeoutMillis: 5000) == nil)
        let results = sendAll(client, count: 20_000)
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
        let server = try startMock(maxStreams: 10)
        defer { server.stop() }
        let client = try makeClient(port: server.port)
        let results = sendAll(client, count: 2_000)
        client.close(drainMillis: 1000)
        #expect(results.count == 2_000)
        #expect(results.allSatisfy { $0.outcome == 1 })
        let stats = server.stats()
        #expect(stats.refusedStreams == 0)
        #expect(stats.peakConcurrentStreams <= 10)
    }

    @Test("A pool of 4 connections carries the load and opens 4 connections")
    func aPoolOfFourConnections() throws {
        let server = try startMock()
        defer { server.stop() }
        let client = try makeClient(port: server.port, connections: 4)
        let results = sendAll(client, count: 10_000)
        client.close(drainMillis: 1000)
        #expect(results.count == 10_000)
        #expect(results.allSatisfy { $0.outcome == 1 })
        #expect(server.stats().connections == 4)
    }

    @Test("Connecting to a port where nothing listens times out with the connection error")
    func nothingListening() throws {
        let server = try startMock()
        let port = server.port
        server.stop()
        let client = try makeClient(port: port)
        defer { client.close(drainMillis: 0) }
        let error = client.waitUntilConnected(timeoutMillis: 300)
        #expect(error?.status == .timeout)
        #expect(error?.description.contains("refused") == true, "\(error?.description ?? "")")
    }
}
