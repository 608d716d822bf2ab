import Foundation
import Testing
import CSwiftPushABI
import PushCore
@testable import APNsMock
@testable import PushClientCore

/// Persistent refusals (issue 12): APNs refusing the credentials, a server closing right after
/// the TLS handshake, connections turned away. The client must back off (bounded connection
/// attempts, `ReconnectBackoff`), say why, and still give every notification one result.
@Suite("Refusals and reconnect back-off", .timeLimit(.minutes(5)))
struct RefusalBackoffTests {
    let support = ClientTestSupport()

    /// The most connections a client whose pool has `poolSize` positions may open within
    /// `seconds` of persistent refusals, by the documented rule (README, "Reliability").
    func bound(poolSize: Int, seconds: Double) -> Int {
        let backoff = ReconnectBackoff()
        var t = 0.0
        var n = poolSize
        var failures = 1
        while true {
            t += Double(backoff.delayBound(afterFailures: failures)) / 2e9 // the shortest jitter
            if t > seconds { return n }
            n += 1
            failures += 1
        }
    }

    func lastConnectionError(_ client: PushClient) -> String {
        var s = client.stats()
        return withUnsafeBytes(of: &s.last_connection_error) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }

    @Test("30 s (of the client's clock) of ExpiredProviderToken: connections stay within the bound, the clock is named, sending resumes at the first probe after the fault lifts, one result each")
    func expiredTokensForThirtySeconds() throws {
        var faults = MockFaults()
        faults.expireTokensUntil = .max // until the test lifts it
        let server = try support.startMock { $0.faults = faults }
        defer { server.stop() }
        // The client's clock is the test's: 30 s of back-off pass as the test moves it, one
        // back-off at a time, instead of being waited for.
        let clock = ManualClock(wallSeconds: SystemClock.shared.wallSeconds())
        clock.advance(seconds: 1)
        let client = try support.makeClient(port: server.port, connections: 2) { $0.timing.deadlineMillis = 120_000; $0.timing.clock = clock }
        defer { client.close(drainMillis: 0) }
        let sent = clock.monotonicNanos()
        #expect(support.send(client, count: 20).accepted == 20)
        let backedOff = { client.reconnect.nextAttemptNanos > clock.monotonicNanos() }
        #expect(waitUntil(seconds: 10) { backedOff() }, "the refusals set a back-off")
        while client.reconnect.nextAttemptNanos - sent <= 30_000_000_000 {
            let before = server.stats().connections
            clock.advance(nanos: client.reconnect.nextAttemptNanos - clock.monotonicNanos())
            #expect(waitUntil(seconds: 10) { server.stats().connections > before && backedOff() },
                    "a probe, refused, and the next back-off (\(server.stats().connections) connections)")
        }
        // Nothing may be answered while the fault lasts (every request is refused as expired)
        // and the deadline is far.
        let early = support.collect(client, count: 20, idleMillis: 0)
        #expect(early.isEmpty, "nothing ends while the deadline is far: \(early.first?.reasonText ?? "")")
        let connections = server.stats().connections
        let allowed = bound(poolSize: 2, seconds: 30)
        #expect(allowed == 7)
        #expect(connections <= allowed, "\(connections) connections in 30 s (bound \(allowed))")
        #expect(connections >= 5, "it did keep trying (\(connections))")
        #expect(server.stats().rejectedByReason["ExpiredProviderToken", default: 0] >= 2)
        let error = lastConnectionError(client)
        #expect(error.contains("check this host's clock") && error.contains("iat="), "last_connection_error: \(error)")

        // The fault lifts: the next probe is accepted and the pool refills; with the clock
        // standing at the probe's time, every answer's latency ends exactly there.
        server.setFaults(MockFaults())
        let probeAt = client.reconnect.nextAttemptNanos
        clock.advance(nanos: probeAt - clock.monotonicNanos())
        let results = support.collect(client, count: 20, idleMillis: 30_000)
        #expect(results.count == 20 && Set(results.map(\.tag)).count == 20, "one result each")
        #expect(results.allSatisfy { $0.outcome == 1 }, "\(results.first { $0.outcome != 1 }?.reasonText ?? "")")
        #expect(results.allSatisfy { UInt64($0.latency_us) == (probeAt - sent) / 1000 },
                "accepted at the first probe after the fault lifted: \(Set(results.map(\.latency_us)))")
    }

    @Test("Expired tokens until the deadline: REJECTED ExpiredProviderToken naming the clock, after a single re-sign")
    func expiredTokensUntilDeadline() throws {
        var faults = MockFaults()
        faults.expireTokensUntil = MonotonicTime.nanos() + 600_000_000_000
        let server = try support.startMock { $0.faults = faults }
        defer { server.stop() }
        let client = try support.makeClient(port: server.port, connections: 4) { $0.timing.deadlineMillis = 4000 }
        defer { client.close(drainMillis: 0) }
        #expect(support.send(client, count: 10).accepted == 10)
        let results = support.collect(client, count: 10, idleMillis: 10_000)
        #expect(results.count == 10)
        // The mock allows one stream per token connection until a request is accepted: those
        // answered end REJECTED with the answer, the others were never answered (FAILED
        // QueueTimeout); all name the likely cause.
        for r in results {
            let rejected = r.outcome == 2 && r.status == 403 && r.reason == PUSH_REASON_EXPIRED_PROVIDER_TOKEN.rawValue
            let neverAnswered = r.outcome == 3 && r.reason == PUSH_REASON_QUEUE_TIMEOUT.rawValue
            #expect(rejected || neverAnswered, "\(r.outcome) \(r.reason) \(r.reasonText)")
            #expect(r.reasonText.contains("check this host's clock; token iat="), "\(r.reasonText)")
        }
        #expect(results.contains { $0.outcome == 2 })
        // 4 positions open together, then probes no sooner than 0.5, 1.5 and 3.5 s in.
        #expect(server.stats().connections <= bound(poolSize: 4, seconds: 4))
        #expect(client.token?.generation == 2, "the first token, and one re-signed after the first expiry")
    }

    @Test("Two I/O threads share one back-off: the thread with notifications waiting probes, an idle one does not hold the probe")
    func sharedBackoffProbesWhereTheWorkIs() throws {
        var faults = MockFaults()
        faults.expireTokensUntil = MonotonicTime.nanos() + 3_000_000_000
        let server = try support.startMock { $0.faults = faults }
        defer { server.stop() }
        let group = try support.makeGroup(port: server.port, ioThreads: 2, connections: 2) { $0.timing.deadlineMillis = 60_000 }
        defer { group.close(drainMillis: 0) }
        #expect(support.send(group, count: 10).accepted == 10, "one batch: one thread's work")
        let results = support.collect(group, count: 10, idleMillis: 40_000)
        #expect(results.count == 10 && results.allSatisfy { $0.outcome == 1 },
                "\(results.count) results; \(results.first { $0.outcome != 1 }?.reasonText ?? "")")
    }

    @Test("A server that closes right after the TLS handshake (a refused client certificate): wait_connected fails with PUSH_E_TLS, results FAILED naming it, reconnects bounded")
    func certificateRefusedAfterHandshake() throws {
        let pki = support.pki
        var faults = MockFaults()
        faults.refuseClientCertificates = true
        let server = try support.startMock { $0.clientCAFile = pki + "/ca.pem"; $0.tokenKeys = []; $0.faults = faults }
        defer { server.stop() }
        let client = try support.makeClient(port: server.port, connections: 2) {
            $0.credentials.tokenKeyPEM = nil
            $0.credentials.clientCertificate = .pem(certificateFile: pki + "/client.pem", keyFile: pki + "/client.key")
        }
        defer { client.close(drainMillis: 0) }
        let error = client.waitUntilConnected(timeoutMillis: 10_000)
        #expect(error?.status == .tls, "\(error?.description ?? "connected")")
        #expect(error?.description.contains("right after the TLS handshake") == true, "\(error?.description ?? "")")
        #expect(error?.description.contains("certificate was refused") == true)
        #expect(support.send(client, count: 20).accepted == 20)
        let results = support.collect(client, count: 20, idleMillis: 10_000)
        #expect(results.count == 20)
        #expect(results.allSatisfy { $0.outcome == 3 && $0.reason == PUSH_REASON_TLS_FAILED.rawValue && $0.reasonText.contains("right after the TLS handshake") },
                "\(results.first.map { "\($0.reason) \($0.reasonText)" } ?? "")")
        #expect(lastConnectionError(client).contains("right after the TLS handshake"))
        #expect(server.stats().refusedCertificates >= 1)
        #expect(server.stats().accepted == 0)
    }

    @Test("Connections turned away at once (TCP accepted, closed before TLS): attempts follow the back-off in the client's clock, within the bound, then sending resumes")
    func connectionsRefused() throws {
        var faults = MockFaults()
        faults.refuseConnectionsUntil = .max // until the test lifts it
        let server = try support.startMock { $0.faults = faults }
        defer { server.stop() }
        // The client's clock is the test's: the back-off passes when the test moves it, so the
        // attempts over 8 s of the client's time are counted without waiting 8 s.
        let clock = ManualClock(wallSeconds: SystemClock.shared.wallSeconds())
        clock.advance(seconds: 1)
        // Fail-fast off: 8 s without a connection would otherwise end the ten Unreachable
        // (ClientCoreReachabilityTests); here they wait, to show sending resumes.
        let client = try support.makeClient(port: server.port, connections: 3) {
            $0.timing.deadlineMillis = 60_000; $0.timing.clock = clock; $0.recovery.unreachableAfterMillis = 0
        }
        defer { client.close(drainMillis: 0) }
        #expect(support.send(client, count: 10).accepted == 10)
        // The three positions try together and are turned away: one failure, one back-off.
        let backedOff = { client.reconnect.nextAttemptNanos > clock.monotonicNanos() }
        #expect(waitUntil(seconds: 10) { server.stats().refusedConnections == 3 && backedOff() }, "\(server.stats().refusedConnections) attempts")
        // Each back-off passed lets exactly one probe go (refused in turn), never the pool.
        let window: UInt64 = 8_000_000_000
        let start = clock.monotonicNanos()
        var attempts = 3
        while client.reconnect.nextAttemptNanos - start <= window {
            clock.advance(nanos: client.reconnect.nextAttemptNanos - clock.monotonicNanos())
            attempts += 1
            #expect(waitUntil(seconds: 10) { server.stats().refusedConnections == attempts && backedOff() },
                    "\(server.stats().refusedConnections) attempts after \(attempts - 3) back-offs")
        }
        #expect(server.stats().refusedConnections == attempts)
        #expect(attempts >= 5 && attempts <= bound(poolSize: 3, seconds: 8), "\(attempts) attempts in 8 s of the client's time")
        // The fault lifts: the next probe is accepted and everything is sent.
        server.setFaults(MockFaults())
        clock.advance(nanos: client.reconnect.nextAttemptNanos - clock.monotonicNanos())
        let results = support.collect(client, count: 10, idleMillis: 30_000)
        #expect(results.count == 10 && results.allSatisfy { $0.outcome == 1 })
    }
}
