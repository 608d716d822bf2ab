import Foundation
import Testing
import CSwiftPushABI
import PushCore
@testable import APNsMock
@testable import PushClientCore

/// What APNs does to clients, done by the mock, and what the client promises in return: every
/// notification gets exactly one outcome, nothing processed twice, checked against the mock's
/// own record of what it processed.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct TransportFaultTests {
    let support = ClientTestSupport()

    /// Exactly-once check: each tag has one result; each accepted result's apns-id was processed
    /// with 200 exactly once; no apns-id was answered 200 twice.
    func expectExactlyOnce(_ results: [push_result], count: Int, records: [MockRecord],
                           sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(results.count == count, "one result per notification", sourceLocation: sourceLocation)
        #expect(Set(results.map(\.tag)).count == count, "no tag twice", sourceLocation: sourceLocation)
        var processed: [String: Int] = [:]
        for r in records where r.status == 200 { processed[r.apnsId, default: 0] += 1 }
        #expect(processed.values.allSatisfy { $0 == 1 }, "nothing answered 200 twice", sourceLocation: sourceLocation)
        for r in results where r.outcome == 1 {
            #expect(processed[r.apnsID] == 1, "accepted \(r.apnsID) was processed once", sourceLocation: sourceLocation)
        }
    }

    @Test("GOAWAY after every 1000 requests: replacements take over, nothing lost, nothing twice, the reason is reported")
    func goawayAfterRequests() throws {
        var faults = MockFaults()
        faults.goawayAfterRequests = 1000
        faults.goawayReason = "Shutdown"
        let server = try support.startMock { $0.faults = faults }
        defer { server.stop() }
        let client = try support.makeClient(port: server.port)
        defer { client.close(drainMillis: 0) }
        let results = support.sendAll(client, count: 10_000)
        expectExactlyOnce(results, count: 10_000, records: server.record())
        #expect(results.allSatisfy { $0.outcome == 1 })
        let stats = client.stats()
        #expect(stats.goaways >= 9)
        var reason = stats.last_goaway_reason
        #expect(withUnsafeBytes(of: &reason) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) } == "Shutdown")
    }

    @Test("Streams refused with REFUSED_STREAM are sent again and accepted; unprocessed writes are not counted as attempts")
    func refusedStreamsAreResent() throws {
        var faults = MockFaults()
        faults.refuseEveryNthStream = 7
        let server = try support.startMock { $0.faults = faults }
        defer { server.stop() }
        let client = try support.makeClient(port: server.port)
        defer { client.close(drainMillis: 0) }
        let results = support.sendAll(client, count: 5000)
        expectExactlyOnce(results, count: 5000, records: server.record())
        #expect(results.allSatisfy { $0.outcome == 1 }, "\(results.filter { $0.outcome != 1 }.first.map { "\($0.reason) \($0.reasonText)" } ?? "")")
        // The server never processed the refused writes: each result counts only the attempt
        // that reached it; the stats count every write.
        #expect(results.allSatisfy { $0.attempts == 1 }, "\(results.map(\.attempts).max() ?? 0)")
        let stats = client.stats()
        #expect(stats.retries > 0)
        #expect(stats.sent > 5000, "raw writes include the refused ones (\(stats.sent))")
    }

    @Test("A stalled stream times out at its deadline as FAILED Timeout; the others are accepted")
    func stalledStreamsTimeOut() throws {
        var faults = MockFaults()
        faults.stallEveryNth = 250
        let server = try support.startMock { $0.faults = faults }
        defer { server.stop() }
        let client = try support.makeClient(port: server.port) { $0.timing.deadlineMillis = 1000 }
        defer { client.close(drainMillis: 0) }
        let results = support.sendAll(client, count: 1000)
        expectExactlyOnce(results, count: 1000, records: server.record())
        let timedOut = results.filter { $0.outcome == 3 }
        #expect(timedOut.count == 4)
        #expect(timedOut.allSatisfy { $0.reason == APNsReason.timeout.rawValue })
        #expect(results.filter { $0.outcome == 1 }.count == 996)
    }

    @Test("The stream limit drops to 1 after rejections and comes back; 410 carries its timestamp")
    func limitDropsAndComesBack() throws {
        let gone = "aa" + String(ClientTestSupport.token.dropFirst(2))
        var faults = MockFaults()
        faults.dropLimitToOneAfterRejection = true
        faults.unregisteredTokens = [gone: 1_700_000_000_123]
        let server = try support.startMock { $0.faults = faults }
        defer { server.stop() }
        let client = try support.makeClient(port: server.port)
        defer { client.close(drainMillis: 0) }
        var results: [push_result] = []
        for round in 0..<5 {
            #expect(support.send(client, count: 400, firstTag: round * 500).accepted == 400)
            #expect(support.send(client, count: 100, firstTag: round * 500 + 400, token: gone).accepted == 100)
            results += support.collect(client, count: 500)
        }
        #expect(results.count == 2500)
        let rejected = results.filter { $0.outcome == 2 }
        #expect(rejected.count == 500)
        #expect(rejected.allSatisfy { $0.status == 410 && $0.reason == APNsReason.unregistered.rawValue && $0.timestamp_ms == 1_700_000_000_123 })
        #expect(results.filter { $0.outcome == 1 }.count == 2000)
        #expect(server.stats().refusedStreams == 0, "never above the lowered limit")
        #expect(server.stats().peakConcurrentStreams > 1, "the limit came back")
    }

    @Test("429 is retried with back-off until the attempt budget is spent, then REJECTED with the attempts made")
    func tooManyRequestsRetried() throws {
        let busy = "bb" + String(ClientTestSupport.token.dropFirst(2))
        var faults = MockFaults()
        faults.tooManyRequestsTokens = [busy]
        let server = try support.startMock { $0.faults = faults }
        defer { server.stop() }
        let client = try support.makeClient(port: server.port) {
            $0.recovery.retryDelayMillis = 20
            $0.recovery.maxAttempts = 3
        }
        defer { client.close(drainMillis: 0) }
        #expect(support.send(client, count: 5, token: busy).accepted == 5)
        let results = support.collect(client, count: 5)
        #expect(results.count == 5)
        #expect(results.allSatisfy { $0.outcome == 2 && $0.status == 429 && $0.attempts == 3 })
        #expect(server.record().count == 15, "three attempts each reached the server")
    }

    @Test("500 and 503 answers are retried and end accepted; permanent rejections are never retried")
    func serverErrorsRetried() throws {
        var faults = MockFaults()
        faults.status500EveryNth = 13
        faults.status503EveryNth = 17
        let server = try support.startMock { $0.faults = faults }
        defer { server.stop() }
        let client = try support.makeClient(port: server.port) { $0.recovery.retryDelayMillis = 10; $0.recovery.maxAttempts = 5 }
        defer { client.close(drainMillis: 0) }
        let results = support.sendAll(client, count: 2000)
        expectExactlyOnce(results, count: 2000, records: server.record())
        // A notification may meet 5xx on every attempt by chance (every Nth counts across all
        // requests); then it ends REJECTED with the budget spent, never FAILED.
        let notAccepted = results.filter { $0.outcome != 1 }
        #expect(notAccepted.count <= 2)
        #expect(notAccepted.allSatisfy { $0.outcome == 2 && $0.attempts == 5 && ($0.status == 500 || $0.status == 503) })
        #expect(results.contains { $0.attempts > 1 })

        // Unregistered is permanent: one attempt, REJECTED.
        var permanent = MockFaults()
        let gone = String(repeating: "ab", count: 32)
        permanent.unregisteredTokens = [gone: 1]
        server.setFaults(permanent)
        let before = server.record().count
        #expect(support.send(client, count: 1, token: gone).accepted == 1)
        let bad = support.collect(client, count: 1)
        #expect(bad.first?.outcome == 2 && bad.first?.attempts == 1)
        #expect(server.record().count == before + 1)
    }

    @Test("The server killed mid-run and restarted: every notification is accounted for, none processed twice")
    func serverKilledAndRestarted() throws {
        let first = try support.startMock()
        let port = first.port
        let client = try support.makeClient(port: port) { $0.timing.deadlineMillis = 20_000 }
        defer { client.close(drainMillis: 0) }
        #expect(support.send(client, count: 20_000, timeoutMillis: 5000).accepted == 20_000)
        var results = support.collect(client, count: 5000)
        first.stop()
        let recordsBefore = first.record()
        let second = try support.startMock(port: port)
        defer { second.stop() }
        results += support.collect(client, count: 20_000 - results.count, idleMillis: 10_000)
        expectExactlyOnce(results, count: 20_000, records: recordsBefore + second.record())
        let failed = results.filter { $0.outcome == 3 }
        #expect(failed.allSatisfy { $0.reason == APNsReason.connectionLost.rawValue }, "only in-flight ones may be lost")
        #expect(results.filter { $0.outcome == 1 }.count + failed.count == 20_000)
        #expect(second.stats().accepted > 0, "the rest went to the restarted server")
    }

    @Test("Connections turned away for a while: the client backs off and gets through")
    func refusedConnectionsForAWhile() throws {
        var faults = MockFaults()
        faults.refuseConnectionsUntil = MonotonicTime.nanos() + 500_000_000
        let server = try support.startMock { $0.faults = faults }
        defer { server.stop() }
        let client = try support.makeClient(port: server.port)
        defer { client.close(drainMillis: 0) }
        let results = support.sendAll(client, count: 100)
        #expect(results.count == 100 && results.allSatisfy { $0.outcome == 1 },
                "\(results.filter { $0.outcome != 1 }.first.map { "\($0.reason) \($0.reasonText)" } ?? "")")
    }

    @Test("A connection killed abruptly after N requests: unanswered ones are FAILED ConnectionLost, nothing twice")
    func connectionKilled() throws {
        var faults = MockFaults()
        faults.killConnectionAfterRequests = 700
        let server = try support.startMock { $0.faults = faults }
        defer { server.stop() }
        let client = try support.makeClient(port: server.port)
        defer { client.close(drainMillis: 0) }
        let results = support.sendAll(client, count: 3000)
        expectExactlyOnce(results, count: 3000, records: server.record())
        #expect(results.allSatisfy { $0.outcome == 1 || $0.reason == APNsReason.connectionLost.rawValue })
    }

    @Test("A connection lost abruptly after a GOAWAY is the last connection error, even when an answer retired it while it drained")
    func abruptEndAfterGoawayIsReported() throws {
        // On one connection: the first answer (200) is followed by GOAWAY(Shutdown) naming all
        // three streams processed; the second answer (500) would retire a ready connection
        // (retireAfterServerErrors 1) and arrives while it drains; then the server drops the
        // socket with the third (stalled) stream still open.
        let stalledToken = String(repeating: "ab", count: 32)
        var faults = MockFaults()
        faults.goawayAfterRequests = 1
        faults.status500EveryNth = 2
        faults.stallTokens = [stalledToken]
        faults.killConnectionAfterRequests = 2
        faults.responseDelayMillis = 100 // all three requests are in before the first answer
        let server = try support.startMock()
        defer { server.stop() }
        let client = try support.makeClient(port: server.port) {
            $0.recovery.retireAfterServerErrors = 1
            $0.recovery.maxAttempts = 1 // the 500 ends REJECTED: nothing is sent on another connection
        }
        defer { client.close(drainMillis: 0) }
        // A token connection carries one stream until a notification is accepted: one first,
        // then the faults (which restart the mock's counts) once the limit is raised.
        #expect(support.send(client, count: 1, firstTag: 9).accepted == 1)
        #expect(support.collect(client, count: 1).first?.outcome == 1)
        #expect(waitUntil(seconds: 10) { client.stats().connections.0.stream_limit > 1 })
        server.setFaults(faults)
        #expect(support.send(client, count: 2).accepted == 2)
        #expect(support.send(client, count: 1, firstTag: 2, token: stalledToken).accepted == 1)
        let results = support.collect(client, count: 3).sorted { $0.tag < $1.tag }
        #expect(results.map(\.outcome) == [1, 2, 3], "\(results.map { "\($0.outcome) \($0.reasonText)" })")
        #expect(results.last?.reason == APNsReason.connectionLost.rawValue)
        #expect(server.stats().killedConnections == 1 && server.stats().goaways == 1)
        var stats = client.stats()
        let lastError = withUnsafeBytes(of: &stats.last_connection_error) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        #expect(lastError.hasPrefix("after GOAWAY (Shutdown): "), "last_connection_error: \(lastError)")
    }

    @Test("nghttp2 out of memory as a stream starts: the notification waits and goes out on the same connection, which is not retired")
    func outOfMemoryAtSubmitKeepsTheConnection() throws {
        let server = try support.startMock()
        defer { server.stop() }
        let allocator = FailingAllocator()
        let client = try support.makeClient(port: server.port) { $0.sessionMemory = allocator.sessionMemory }
        defer { client.close(drainMillis: 0) }
        // First one accepted and the stream limit raised: every frame the server sends unasked
        // (SETTINGS, their ACK, the raise) has been read, and reading a frame allocates too.
        #expect(support.send(client, count: 1).accepted == 1)
        #expect(support.collect(client, count: 1).first?.outcome == 1)
        #expect(waitUntil(seconds: 10) { client.stats().connections.0.stream_limit > 1 })
        // The next allocation is nghttp2_submit_request's own: it returns NGHTTP2_ERR_NOMEM.
        allocator.failNext(1)
        #expect(support.send(client, count: 1, firstTag: 1).accepted == 1)
        let result = support.collect(client, count: 1).first
        #expect(result?.outcome == 1 && result?.attempts == 1, "\(result.map { "\($0.outcome) \($0.reasonText)" } ?? "no result")")
        #expect(allocator.refused == 1, "the allocation failed")
        #expect(client.stats().connections_started == 1 && server.stats().connections == 1,
                "not retired: \(client.stats().connections_started) connections started")
    }

    @Test("100,000 notifications over 4 connections with up to 1,500 streams each are all accepted")
    func manyOverFourConnections() throws {
        let server = try support.startMock(maxStreams: 1500) { $0.recordRequests = false }
        defer { server.stop() }
        let client = try support.makeClient(port: server.port, connections: 4) {
            $0.pool.maxStreamsPerConnection = 1500
            $0.pool.queueCapacity = 20_000
        }
        defer { client.close(drainMillis: 0) }
        let results = support.sendAll(client, count: 100_000)
        #expect(results.count == 100_000)
        #expect(Set(results.map(\.tag)).count == 100_000)
        #expect(results.allSatisfy { $0.outcome == 1 })
        let stats = server.stats()
        #expect(stats.connections == 4)
        #expect(stats.accepted == 100_000)
        #expect(stats.peakConcurrentStreams > 1000, "more than 1000 streams on a connection")
    }

    @Test("ExpiredProviderToken signs a new token, retires the connection and resends once")
    func expiredProviderToken() throws {
        let server = try support.startMock { $0.tokenMaxAgeSeconds = 60 }
        defer { server.stop() }
        // The client's clock says the token was signed two minutes ago: the server finds it
        // stale. After 25 minutes (client time) the client may re-sign.
        let clock = ManualClock(wallSeconds: SystemClock.shared.wallSeconds() - 120)
        let client = try support.makeClient(port: server.port) { $0.timing.clock = clock }
        defer { client.close(drainMillis: 0) }
        // Connected first: a connection still being set up when the clock jumps 25 minutes
        // would (rightly) have taken longer than the connect timeout.
        #expect(client.waitUntilConnected(timeoutMillis: 10_000) == nil)
        clock.advance(seconds: 25 * 60)
        #expect(support.send(client, count: 1).accepted == 1)
        #expect(support.passBackoff(of: client, on: clock), "the refusal set a back-off")
        let results = support.collect(client, count: 1)
        #expect(results.first?.outcome == 1)
        #expect(results.first?.attempts == 2)
        #expect(server.record().map(\.reason) == ["ExpiredProviderToken", ""])
    }

    @Test("In development mode the apns-unique-id comes back in the result")
    func uniqueIdInDevelopment() throws {
        let server = try support.startMock { $0.developmentMode = true }
        defer { server.stop() }
        let client = try support.makeClient(port: server.port)
        defer { client.close(drainMillis: 0) }
        let results = support.sendAll(client, count: 3)
        #expect(results.count == 3)
        for var r in results {
            let unique = withUnsafeBytes(of: &r.unique_id) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            #expect(unique.count == 36)
        }
    }
}
