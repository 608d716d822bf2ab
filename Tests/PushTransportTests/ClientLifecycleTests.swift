import Foundation
import Testing
import TestProcessSupport
import Synchronization
import CSwiftPushABI
import PushCore
import PushCrypto
@testable import APNsMock
@testable import PushClientCore
@testable import PushTransport

/// Back-pressure, close, stats, proxy, health and certificate authentication, against the mock
/// server over real TLS + HTTP/2 on loopback.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct ClientLifecycleTests {
    let support = ClientTestSupport()

    @Test("A tiny queue refuses at once with queueFull, and a blocking send waits until results are polled")
    func backPressure() throws {
        let server = try support.startMock()
        defer { server.stop() }
        let client = try support.makeClient(port: server.port) { $0.pool.queueCapacity = 16 }
        defer { client.close(drainMillis: 0) }
        #expect(support.send(client, count: 16).accepted == 16)
        let refused = support.send(client, count: 1, firstTag: 16, timeoutMillis: 0)
        #expect(refused.accepted == 0)
        #expect(refused.error?.status == .queueFull)

        // Another thread frees the slots once the send below is seen waiting for room; the
        // send gets in then, and not before.
        let freedAt = Atomic<UInt64>(0)
        let poller = Thread {
            // All 16 answered and waiting to be polled (so one poll takes exactly those), and the
            // send waiting for room.
            _ = waitUntil(seconds: 10) { client.stats().unpolled == 16 && client.handoff.withLock { $0.waiters } > 0 }
            freedAt.store(MonotonicTime.nanos(), ordering: .sequentiallyConsistent)
            _ = support.collect(client, count: 16, idleMillis: 2000)
        }
        poller.start()
        let waited = support.send(client, count: 1, firstTag: 16, timeoutMillis: 10_000)
        let returnedAt = MonotonicTime.nanos()
        #expect(waited.accepted == 1, "\(String(describing: waited.error))")
        let freed = freedAt.load(ordering: .sequentiallyConsistent)
        #expect(freed != 0 && returnedAt >= freed, "the send waited until the poller freed room")
        let last = support.collect(client, count: 1)
        #expect(last.count == 1 && last[0].tag == 16 && last[0].outcome == 1)
    }

    @Test("Close lets notifications in flight finish within the drain deadline")
    func closeDrains() throws {
        let server = try support.startMock()
        defer { server.stop() }
        let client = try support.makeClient(port: server.port)
        #expect(client.waitUntilConnected(timeoutMillis: 5000) == nil)
        #expect(support.send(client, count: 5000).accepted == 5000)
        client.close(drainMillis: 10_000)
        let results = support.collect(client, count: 5000, idleMillis: 0)
        #expect(results.count == 5000)
        #expect(results.allSatisfy { $0.outcome == 1 }, "all answered before close returned")
        #expect(support.send(client, count: 1).error?.status == .closed)
        client.close(drainMillis: 0) // a second close is harmless
    }

    @Test("Stats count outcomes and show the open connection with its raised stream limit and latencies")
    func stats() throws {
        let server = try support.startMock(maxStreams: 500)
        defer { server.stop() }
        let client = try support.makeClient(port: server.port)
        defer { client.close(drainMillis: 0) }
        let results = support.sendAll(client, count: 2000)
        #expect(results.count == 2000)
        var s = client.stats()
        #expect(waitUntil(seconds: 5) { s = client.stats(); return s.connections_open == 1 && s.connection_count == 1 && s.queued == 0 && s.in_flight == 0 })
        #expect(s.accepted == 2000 && s.rejected == 0 && s.failed == 0)
        #expect(s.sent == 2000)
        #expect(s.queued == 0 && s.in_flight == 0 && s.unpolled == 0)
        #expect(s.connections_started == 1)
        #expect(s.connections.0.state == 2 && s.connections.0.stream_limit == 500)
        #expect(s.latency_p50_us > 0 && s.latency_p99_us >= s.latency_p50_us)
        #expect(s.struct_size == UInt32(MemoryLayout<push_stats>.size))
    }

    @Test("Notifications go through an HTTP CONNECT proxy with credentials; wrong credentials fail clearly")
    func proxy() throws {
        let server = try support.startMock()
        defer { server.stop() }
        let dir = NSTemporaryDirectory() + "swiftpush-proxy-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let proxy = try ChildProcess("/usr/bin/env", ["python3", ClientTestSupport.root.appendingPathComponent("Tests/support/connect_proxy.py").path,
                                                       dir + "/port", "--credentials", "alice:s3cret", "--log", dir + "/log"], stderr: .inherited)
        defer { proxy.kill() }
        #expect(waitUntil(seconds: 5) { FileManager.default.fileExists(atPath: dir + "/port") })
        let proxyPort = try #require(TestFiles.readText(dir + "/port").flatMap { Int($0) })

        let client = try support.makeClient(port: server.port) {
            $0.endpoint.proxy = ("127.0.0.1", proxyPort)
            $0.endpoint.proxyCredentials = SecretBytes(copying: "alice:s3cret")
        }
        let results = support.sendAll(client, count: 200)
        client.close(drainMillis: 0)
        #expect(results.count == 200 && results.allSatisfy { $0.outcome == 1 })
        let log = TestFiles.readText(dir + "/log") ?? ""
        #expect(log.contains("localhost:\(server.port)"), "the proxy saw the tunnel: \(log)")

        let refused = try support.makeClient(port: server.port) {
            $0.endpoint.proxy = ("127.0.0.1", proxyPort)
            $0.endpoint.proxyCredentials = SecretBytes(copying: "alice:wrong")
        }
        defer { refused.close(drainMillis: 0) }
        let error = refused.waitUntilConnected(timeoutMillis: 1000)
        #expect(error?.description.contains("407") == true, "\(error?.description ?? "no error")")
    }

    @Test("An idle connection is PINGed and, acknowledged, stays in use")
    func idlePing() throws {
        let server = try support.startMock()
        defer { server.stop() }
        let client = try support.makeClient(port: server.port) {
            $0.timing.idlePingMillis = 100
            $0.timing.pingTimeoutMillis = 1000
        }
        defer { client.close(drainMillis: 0) }
        #expect(support.sendAll(client, count: 10).count == 10)
        // Several idle periods: the mock counts the PINGs, and the client keeps the connection
        // (each PING was acknowledged in time).
        #expect(waitUntil(seconds: 10) { server.stats().pingsReceived >= 3 }, "PINGs sent: \(server.stats().pingsReceived)")
        #expect(support.sendAll(client, count: 10).allSatisfy { $0.outcome == 1 })
        #expect(client.stats().connections_started == 1, "the connection was never replaced")
    }

    @Test("Certificate authentication works with PEM files and with a .p12")
    func certificateAuth() throws {
        let pki = support.pki
        let server = try support.startMock { $0.clientCAFile = pki + "/ca.pem"; $0.tokenKeys = [] }
        defer { server.stop() }
        for certificate in [ClientCertificate.pem(certificateFile: pki + "/client.pem", keyFile: pki + "/client.key"),
                            .pkcs12(bytes: try FileBytes.readSecret(path: pki + "/client.p12", limit: 1 << 20), password: SecretBytes(copying: "secret"))] {
            let client = try support.makeClient(port: server.port) {
                $0.credentials.tokenKeyPEM = nil
                $0.credentials.clientCertificate = certificate
            }
            let results = support.sendAll(client, count: 100)
            client.close(drainMillis: 0)
            #expect(results.count == 100 && results.allSatisfy { $0.outcome == 1 }, "\(certificate)")
        }
    }

    @Test("A wrong .p12 password and a key that does not match the certificate fail with clear errors")
    func certificateErrors() throws {
        let pki = support.pki
        let p12 = try FileBytes.readSecret(path: pki + "/client.p12", limit: 1 << 20)
        #expect(throws: TransportError.self) { try ClientCertificate.pkcs12(bytes: p12, password: SecretBytes(copying: "nope")).validate() }
        do {
            try ClientCertificate.pkcs12(bytes: p12, password: SecretBytes(copying: "nope")).validate()
        } catch {
            #expect(error.description.contains("wrong password"))
        }
        do {
            try ClientCertificate.pem(certificateFile: pki + "/client.pem", keyFile: pki + "/untrusted-client.key").validate()
            Issue.record("a mismatched key was accepted")
        } catch {
            #expect(error.description.contains("does not match"), "\(error.description)")
        }
    }

    @Test("A client certificate from a CA the server does not trust gets FAILED results, and reconnects back off")
    func untrustedClientCertificate() throws {
        let pki = support.pki
        let server = try support.startMock { $0.clientCAFile = pki + "/ca.pem"; $0.tokenKeys = [] }
        defer { server.stop() }
        let client = try support.makeClient(port: server.port) {
            $0.credentials.tokenKeyPEM = nil
            $0.credentials.clientCertificate = .pem(certificateFile: pki + "/untrusted-client.pem", keyFile: pki + "/untrusted-client.key")
        }
        defer { client.close(drainMillis: 0) }
        // With TLS 1.3 the server checks the client's certificate after the client considers
        // the handshake done, so the refusal arrives as an alert on the first request.
        _ = client.waitUntilConnected(timeoutMillis: 1000)
        #expect(support.send(client, count: 1).accepted == 1)
        let results = support.collect(client, count: 1, idleMillis: 3000)
        #expect(results.count == 1 && results.first?.outcome == 3, "FAILED")
        #expect(results.first.map { $0.reasonText.contains("certificate") || $0.reasonText.contains("alert") } == true,
                "\(results.first?.reasonText ?? "")")
        // Each refused attempt doubles the wait before the next (README, Reliability): after the
        // second failure, no more than the pool's connection and one probe were made.
        #expect(waitUntil(seconds: 10) { client.reconnect.failures >= 2 })
        #expect(client.stats().connections_started <= 3, "reconnects back off instead of spinning (\(client.stats().connections_started))")
    }
}
