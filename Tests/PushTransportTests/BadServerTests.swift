import Foundation
import Synchronization
import Testing
import TestProcessSupport
import CSwiftPushABI
import PushCore
@testable import APNsMock
@testable import PushClientCore
@testable import PushChannels

/// Servers that are not a healthy APNs (issue #8, item 5): certificates that must not be
/// trusted (self-signed, for another host, expired, not yet valid), a server that offers only
/// TLS 1.1, one without ALPN h2, one that speaks HTTP/1.1, one that sends garbage, one that
/// accepts TCP and never answers, and client certificates the server must refuse (expired, not
/// yet valid). Each time the client must say what went wrong — from `waitUntilConnected` and in
/// the FAILED result of a notification — within a bounded time, without crashing or hanging.
///
/// The certificate cases run the project's mock with a special certificate; the others run
/// `Tests/support/bad_server.py` (loopback only, killed with SIGKILL afterwards).
@Suite(.serialized, .timeLimit(.minutes(5)))
struct BadServerTests {
    let support = ClientTestSupport()

    /// A notification's deadline in these tests: everything must be over well before a test
    /// would seem to hang.
    static let deadlineMillis = 3000

    /// What a client saw of a bad server.
    struct Encounter {
        /// `waitUntilConnected`'s answer (nil: it connected).
        var waitError: ClientError?
        /// The one notification's result.
        var result: push_result?
        /// From opening the client to the result.
        var elapsedMillis: UInt64
        var stats: push_stats
    }

    /// Opens a client to `port` (host "localhost", the test CA), waits for a connection, sends one
    /// notification and collects its result.
    func encounter(port: Int, waitMillis: Int32 = 2000, configure: (inout ClientConfiguration) -> Void = { _ in }) throws -> Encounter {
        let started = MonotonicTime.nanos()
        let client = try support.makeClient(port: port, connections: 1) {
            $0.timing.deadlineMillis = Self.deadlineMillis
            $0.timing.connectTimeoutMillis = 500
            configure(&$0)
        }
        defer { client.close(drainMillis: 0) }
        let waitError = client.waitUntilConnected(timeoutMillis: waitMillis)
        let sent = support.send(client, count: 1)
        #expect(sent.accepted == 1, "send: \(String(describing: sent.error))")
        let results = support.collect(client, count: 1, idleMillis: Int32(Self.deadlineMillis + 3000))
        return Encounter(waitError: waitError, result: results.first,
                         elapsedMillis: (MonotonicTime.nanos() - started) / 1_000_000, stats: client.stats())
    }

    /// Checks that the client failed at once with a TLS error whose message contains `text`, and
    /// that the notification ended FAILED with `TLSFailed` and the same explanation.
    func expectTLSFailure(_ e: Encounter, _ texts: [String], sourceLocation: SourceLocation = #_sourceLocation) {
        let message = e.waitError?.description ?? "connected"
        #expect(e.waitError?.status == .tls, "wait: \(message)", sourceLocation: sourceLocation)
        #expect(texts.contains { message.contains($0) }, "wait: \(message)", sourceLocation: sourceLocation)
        guard let r = e.result else {
            Issue.record("no result", sourceLocation: sourceLocation)
            return
        }
        #expect(r.outcome == 3 && r.reason == APNsReason.tlsFailed.rawValue,
                "outcome \(r.outcome) reason \(r.reason): \(r.reasonText)", sourceLocation: sourceLocation)
        #expect(texts.contains { r.reasonText.contains($0) }, "result: \(r.reasonText)", sourceLocation: sourceLocation)
        #expect(e.elapsedMillis < UInt64(Self.deadlineMillis), "took \(e.elapsedMillis) ms: a TLS failure fails what waits at once",
                sourceLocation: sourceLocation)
        var s = e.stats
        let lastError = withUnsafeBytes(of: &s.last_connection_error) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        #expect(texts.contains { lastError.contains($0) }, "stats: \(lastError)", sourceLocation: sourceLocation)
    }

    // MARK: - Certificates the client must not trust (the mock with a special certificate)

    func mock(certificate name: String) throws -> MockServer {
        let pki = support.pki
        return try support.startMock { $0.certificateChainFile = pki + "/\(name).pem"; $0.privateKeyFile = pki + "/\(name).key" }
    }

    @Test("A self-signed server certificate: certificate verify failed: self-signed certificate")
    func selfSignedServer() throws {
        let server = try mock(certificate: "selfsigned-server")
        defer { server.stop() }
        expectTLSFailure(try encounter(port: server.port), ["certificate verify failed: self-signed certificate",
                                                            "certificate verify failed: self signed certificate"])
    }

    @Test("A certificate for another host name: certificate verify failed: hostname mismatch")
    func hostNameMismatch() throws {
        let server = try mock(certificate: "otherhost-server")
        defer { server.stop() }
        expectTLSFailure(try encounter(port: server.port), ["certificate verify failed: hostname mismatch"])
    }

    @Test("The same certificate reached by IP address: certificate verify failed: IP address mismatch")
    func ipAddressMismatch() throws {
        let server = try mock(certificate: "otherhost-server")
        defer { server.stop() }
        expectTLSFailure(try encounter(port: server.port) { $0.endpoint.host = "127.0.0.1" },
                         ["certificate verify failed: IP address mismatch"])
    }

    @Test("An expired server certificate: certificate verify failed: certificate has expired")
    func expiredServerCertificate() throws {
        let server = try mock(certificate: "expired-server")
        defer { server.stop() }
        expectTLSFailure(try encounter(port: server.port), ["certificate verify failed: certificate has expired"])
    }

    @Test("A server certificate not yet valid: certificate verify failed: certificate is not yet valid")
    func notYetValidServerCertificate() throws {
        let server = try mock(certificate: "notyet-server")
        defer { server.stop() }
        expectTLSFailure(try encounter(port: server.port), ["certificate verify failed: certificate is not yet valid"])
    }

    // MARK: - Servers that are not APNs (Tests/support/bad_server.py)

    @Test("A server offering only TLS 1.1: the handshake fails with a protocol-version error")
    func tls11OnlyServer() throws {
        let server = try ScriptServer(mode: "tls11", pki: support.pki)
        defer { server.stop() }
        expectTLSFailure(try encounter(port: server.port), ["protocol version", "unsupported protocol"])
        #expect(server.connectionsAccepted >= 1)
    }

    @Test("A server that offers only ALPN http/1.1: did not agree to HTTP/2 (ALPN h2)")
    func http11AlpnServer() throws {
        let server = try ScriptServer(mode: "http1", pki: support.pki)
        defer { server.stop() }
        expectTLSFailure(try encounter(port: server.port), ["did not agree to HTTP/2 (ALPN h2)"])
    }

    @Test("A TLS server without ALPN: did not agree to HTTP/2 (ALPN h2)")
    func noAlpnServer() throws {
        let server = try ScriptServer(mode: "no-alpn", pki: support.pki)
        defer { server.stop() }
        expectTLSFailure(try encounter(port: server.port), ["did not agree to HTTP/2 (ALPN h2)"])
    }

    @Test("A server that agrees to h2 but speaks HTTP/1.1: the notification fails saying the server answered in HTTP/1.x")
    func http11BehindH2() throws {
        let server = try ScriptServer(mode: "http1-as-h2", pki: support.pki)
        defer { server.stop() }
        let e = try encounter(port: server.port, waitMillis: 500)
        // Never "connected": a ready connection is one whose server sent HTTP/2 SETTINGS.
        #expect(e.waitError?.description.contains("the server answered in HTTP/1.x") == true, "\(e.waitError?.description ?? "connected")")
        let r = try #require(e.result)
        #expect(r.outcome == 3, "FAILED, not \(r.outcome)")
        #expect(r.reasonText.contains("the server answered in HTTP/1.x, not HTTP/2: HTTP/1.1 400 Bad Request"), "\(r.reasonText)")
        #expect(e.elapsedMillis < UInt64(Self.deadlineMillis + 1500), "took \(e.elapsedMillis) ms")
        #expect(e.stats.connections_started < 20, "reconnects back off (\(e.stats.connections_started) attempts)")
    }

    @Test("A server that sends garbage instead of TLS: the handshake fails and says so")
    func garbageServer() throws {
        let server = try ScriptServer(mode: "garbage", pki: support.pki)
        defer { server.stop() }
        expectTLSFailure(try encounter(port: server.port), ["(the server does not speak TLS)"])
    }

    @Test("A server that accepts TCP and never answers: connects time out, the notification fails by its deadline")
    func silentServer() throws {
        let server = try ScriptServer(mode: "silent", pki: support.pki)
        defer { server.stop() }
        let e = try encounter(port: server.port, waitMillis: 1200)
        let message = e.waitError?.description ?? "connected"
        #expect(e.waitError?.status == .timeout, "wait: \(message)")
        #expect(message.contains("timed out"), "wait names the connect timeout: \(message)")
        let r = try #require(e.result)
        #expect(r.outcome == 3 && r.reason == APNsReason.queueTimeout.rawValue, "outcome \(r.outcome) reason \(r.reason): \(r.reasonText)")
        #expect(r.reasonText.contains("timed out"), "result names the connect timeout: \(r.reasonText)")
        #expect(e.elapsedMillis >= UInt64(Self.deadlineMillis) - 100 && e.elapsedMillis < UInt64(Self.deadlineMillis) + 2500,
                "ended by its deadline: \(e.elapsedMillis) ms")
        #expect(server.connectionsAccepted >= 2, "timed-out attempts are retried (\(server.connectionsAccepted))")
        #expect(e.stats.connections_started < 20, "with back-off (\(e.stats.connections_started) attempts)")
    }

    @Test("A channel-management call with no time limit, on a server that took the request and went silent, ends when its PING goes unanswered")
    func silentManagementServer() throws {
        let server = try ScriptServer(mode: "h2-silent", pki: support.pki)
        defer { server.stop() }
        var configuration = try support.configuration(port: server.port, connections: 1)
        configuration.timing.idlePingMillis = 200
        configuration.timing.pingTimeoutMillis = 300
        let client = try ChannelManagementClient(configuration: configuration, host: "localhost", port: server.port)
        let request = try ChannelRequest(.list, bundleId: "com.example.app")
        let outcome = Mutex<Result<ChannelManagementClient.Answer, ClientError>?>(nil)
        let returned = DispatchSemaphore(value: 0)
        let started = MonotonicTime.nanos()
        Thread {
            let r = client.send(request, timeoutMillis: -1)
            outcome.withLock { $0 = r }
            returned.signal()
        }.start()
        // Bounded: without PINGs the call never returns; stopping the server then ends it.
        let byItself = returned.wait(timeout: .now() + 10) == .success
        let accepted = server.connectionsAccepted
        if !byItself {
            server.stop()
            returned.wait()
        }
        #expect(byItself, "the call returned by itself")
        let elapsedMillis = (MonotonicTime.nanos() - started) / 1_000_000
        guard case .failure(let e)? = outcome.withLock({ $0 }) else {
            Issue.record("the silent server answered?")
            return
        }
        #expect(e.status == .connect && e.description.contains("no PING acknowledgement within 300 ms"), "\(e)")
        #expect(e.description.contains("may or may not have processed"), "\(e)")
        #expect(elapsedMillis >= 500, "idle 200 ms, then 300 ms for the PING: \(elapsedMillis) ms")
        #expect(accepted == 1)
    }

    // MARK: - Client certificates the server must refuse (the mock requiring certificates)

    func expectRefusedClientCertificate(_ name: String, _ texts: [String], sourceLocation: SourceLocation = #_sourceLocation) throws {
        let pki = support.pki
        let server = try support.startMock { $0.clientCAFile = pki + "/ca.pem"; $0.tokenKeys = [] }
        defer { server.stop() }
        let e = try encounter(port: server.port, waitMillis: 1000) {
            $0.credentials.tokenKeyPEM = nil
            $0.credentials.clientCertificate = .pem(certificateFile: pki + "/\(name).pem", keyFile: pki + "/\(name).key")
        }
        // With TLS 1.3 the server judges the client's certificate after the client considers
        // the handshake done: the refusal arrives as an alert when the connection is first read.
        let r = try #require(e.result, sourceLocation: sourceLocation)
        #expect(r.outcome == 3, "FAILED, not \(r.outcome): \(r.reasonText)", sourceLocation: sourceLocation)
        #expect(texts.contains { r.reasonText.contains($0) }, "result: \(r.reasonText)", sourceLocation: sourceLocation)
        #expect(e.elapsedMillis < UInt64(Self.deadlineMillis + 1000), "took \(e.elapsedMillis) ms", sourceLocation: sourceLocation)
        #expect(server.stats().accepted == 0, "nothing got through", sourceLocation: sourceLocation)
    }

    @Test("An expired client certificate is refused by the server: the result says certificate expired")
    func expiredClientCertificate() throws {
        try expectRefusedClientCertificate("expired-client", ["certificate expired"])
    }

    @Test("A client certificate not yet valid is refused by the server: the result says bad certificate")
    func notYetValidClientCertificate() throws {
        try expectRefusedClientCertificate("notyet-client", ["bad certificate", "not yet valid"])
    }
}

/// `Tests/support/bad_server.py` running in one of its modes on a loopback port. Stopped with
/// SIGKILL (a child may inherit a blocked SIGTERM from the test runner).
final class ScriptServer {
    let process: ChildProcess
    let port: Int
    let directory: String

    init(mode: String, pki: String) throws {
        directory = NSTemporaryDirectory() + "swiftpush-badserver-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        process = try ChildProcess("/usr/bin/env", ["python3", ClientTestSupport.root.appendingPathComponent("Tests/support/bad_server.py").path,
                                                    mode, directory + "/port", "--cert", pki + "/server.pem", "--key", pki + "/server.key",
                                                    "--lifetime", "60", "--log", directory + "/log"], stderr: .inherited)
        let (dir, script) = (directory, process)
        var found: Int?
        waitUntil(seconds: 10) {
            found = TestFiles.readText(dir + "/port").flatMap { Int($0) }
            return found != nil || !script.isRunning
        }
        guard let found else {
            process.kill()
            throw ScriptServerError(description: "bad_server.py \(mode) did not start")
        }
        port = found
    }

    /// Connections the server accepted so far.
    var connectionsAccepted: Int {
        (TestFiles.readText(directory + "/log") ?? "").split(separator: "\n").count
    }

    /// Kills the server (once: a test may stop it early).
    func stop() {
        process.kill()
        try? FileManager.default.removeItem(atPath: directory)
    }
}

struct ScriptServerError: Error, CustomStringConvertible {
    let description: String
}
