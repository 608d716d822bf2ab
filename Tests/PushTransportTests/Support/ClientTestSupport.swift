import Foundation
import TestProcessSupport
import CSwiftPushABI
import PushCore
@testable import APNsMock
@testable import PushClientCore
@testable import PushTransport

/// What the client tests share: the test PKI, a mock server, a client configured for it, and
/// a loop that sends notifications and collects every result.
struct ClientTestSupport {
    static let token = "00fc13adff785122b4ad28809a3420982341241421348097878e577c991de8f0"
    static let payload = #"{"aps":{"alert":"hello"}}"#

    /// The package's root directory (symbolic links resolved: Tests/sanitizers/Package.swift
    /// builds this file through one).
    static let root = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath()
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The test keys and certificates, made once per test process.
    static let pki: String = {
        let dir = NSTemporaryDirectory() + "swiftpush-client-tests-\(getpid())"
        let status = run("/bin/bash", [root.appendingPathComponent("scripts/make-test-pki.sh").path, dir])
        precondition(status == 0, "make-test-pki.sh failed")
        return dir
    }()

    /// Runs a command to its end (at most `seconds`, then it is killed) and returns its exit
    /// status (-1 when it could not start or was killed); its standard error is passed through.
    @discardableResult
    static func run(_ executable: String, _ arguments: [String], seconds: Double = 180) -> Int32 {
        guard case .exited(let code)? = ChildProcess.run(executable, arguments, passErrors: true, seconds: seconds).termination else { return -1 }
        return code
    }

    var pki: String { Self.pki }

    /// A mock server with the test certificate, trusting TESTKEY001.
    func startMock(maxStreams: Int = 1000, port: Int = 0, configure: (inout MockServer.Configuration) -> Void = { _ in }) throws -> MockServer {
        var c = MockServer.Configuration(certificateChainFile: pki + "/server.pem", privateKeyFile: pki + "/server.key")
        c.tokenKeys = [try MockServer.TokenKey(keyID: "TESTKEY001", teamID: "TEAM123456", file: pki + "/AuthKey_TESTKEY001.pub.pem")]
        c.maxConcurrentStreams = maxStreams
        c.port = port
        configure(&c)
        let server = MockServer(configuration: c)
        try server.start()
        return server
    }

    /// A client with `ioThreads` I/O threads for a mock on `port`, configured as makeClient's.
    func makeGroup(port: Int, ioThreads: Int, connections: Int, configure: (inout ClientConfiguration) -> Void = { _ in }) throws -> PushClientGroup {
        var c = try configuration(port: port, connections: connections)
        c.pool.ioThreads = ioThreads
        configure(&c)
        return try PushClientGroup(configuration: c)
    }

    /// A client for a mock on `port`, token auth with the test key.
    func makeClient(port: Int, connections: Int = 1, configure: (inout ClientConfiguration) -> Void = { _ in }) throws -> PushClient {
        var c = try configuration(port: port, connections: connections)
        configure(&c)
        return try PushClient(configuration: c)
    }

    /// The test configuration: the mock's CA, the test key, the default topic.
    func configuration(port: Int, connections: Int) throws -> ClientConfiguration {
        var c = ClientConfiguration()
        c.endpoint.host = "localhost"
        c.endpoint.port = port
        c.endpoint.caFile = pki + "/ca.pem"
        c.credentials.tokenKeyPEM = try FileBytes.read(path: pki + "/AuthKey_TESTKEY001.p8", limit: 65536)
        c.credentials.keyID = "TESTKEY001"
        c.credentials.teamID = "TEAM123456"
        c.defaultTopic = Array("com.example.app".utf8)
        c.pool.connections = connections
        return c
    }

    /// Sends `count` notifications (tags `firstTag...`) with `token` and returns how many were accepted by send.
    func send(_ client: some TestClient, count: Int, firstTag: Int = 0, token: String = ClientTestSupport.token,
              timeoutMillis: Int32 = 1000) -> PushClient.SendResult {
        token.withCString { tokenPtr in
            Self.payload.withCString { payload in
                var batch = [push_notification](repeating: push_notification(), count: count)
                for i in 0..<count {
                    batch[i].device_token = tokenPtr
                    batch[i].payload = payload
                    batch[i].tag = UInt64(firstTag + i)
                }
                return batch.withUnsafeBufferPointer { client.send($0.baseAddress!, count: count, timeoutMillis: timeoutMillis) }
            }
        }
    }

    /// For a client on a `ManualClock`: waits until a refusal has backed off its next connection
    /// (in the clock's time, which stands still), then moves the clock to the end of the back-off
    /// so that the client reconnects. Returns false when no back-off came within 10 s.
    func passBackoff(of client: PushClient, on clock: ManualClock) -> Bool {
        guard waitUntil(seconds: 10, { client.reconnect.nextAttemptNanos > clock.monotonicNanos() }) else { return false }
        clock.advance(nanos: client.reconnect.nextAttemptNanos - clock.monotonicNanos())
        return true
    }

    /// Polls until `count` results arrived or nothing came for `idleMillis`.
    func collect(_ client: some TestClient, count: Int, idleMillis: Int32 = 5000) -> [push_result] {
        var results: [push_result] = []
        var page = [push_result](repeating: push_result(), count: 1000)
        while results.count < count {
            let wanted = min(1000, count - results.count)
            let got = page.withUnsafeMutableBytes {
                client.poll(into: $0.baseAddress!, max: wanted, recordSize: MemoryLayout<push_result>.stride, timeoutMillis: idleMillis)
            }
            if got.count == 0 { break }
            results.append(contentsOf: page.prefix(got.count))
        }
        return results
    }

    /// Sends `count` notifications (tags 0..<count) in batches and collects every result.
    func sendAll(_ client: some TestClient, count: Int) -> [push_result] {
        var results: [push_result] = []
        var sent = 0
        var page = [push_result](repeating: push_result(), count: 1000)
        var idle = 0
        while results.count < count && idle < 50 {
            if sent < count {
                sent += send(client, count: min(500, count - sent), firstTag: sent).accepted
            }
            let got = page.withUnsafeMutableBytes {
                client.poll(into: $0.baseAddress!, max: 1000, recordSize: MemoryLayout<push_result>.stride,
                            timeoutMillis: sent == count ? 100 : 0).count
            }
            idle = (got == 0 && sent == count) ? idle + 1 : 0
            results.append(contentsOf: page.prefix(got))
        }
        return results
    }
}

extension push_result {
    /// The reason text as a Swift string.
    var reasonText: String {
        var copy = reason_text
        return withUnsafeBytes(of: &copy) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }

    /// The apns-id as a Swift string.
    var apnsID: String {
        var copy = apns_id
        return withUnsafeBytes(of: &copy) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }
}

/// What the send-and-collect helpers need: a client with one I/O thread or a group of them.
protocol TestClient {
    func send(_ notifications: UnsafePointer<push_notification>, count: Int, timeoutMillis: Int32) -> PushClient.SendResult
    func poll(into out: UnsafeMutableRawPointer, max: Int, recordSize: Int, timeoutMillis: Int32) -> (count: Int, allDelivered: Bool)
}
extension PushClient: TestClient {}
extension PushClientGroup: TestClient {}

/// Waits until `condition` holds (checked every 2 ms) or `seconds` pass; returns whether it
/// held. For conditions with no notification to wait on (a mock's counter, a client's state):
/// the test waits for what it checks, not for a guessed time.
@discardableResult
func waitUntil(seconds: Double, _ condition: () -> Bool) -> Bool {
    let until = MonotonicTime.nanos() + UInt64(seconds * 1e9)
    while !condition() {
        if MonotonicTime.nanos() >= until { return false }
        usleep(2_000) // between two looks at a condition that signals no one (see above)
    }
    return true
}
