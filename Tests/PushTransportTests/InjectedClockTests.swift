import Testing
import CSwiftPushABI
import PushCore
@testable import APNsMock
@testable import PushClientCore

/// The client decides by its injected clock (`ClientConfiguration.timing.clock`) alone: with a
/// `ManualClock`, deadlines and health PINGs come when the test moves the clock, at once, and
/// not while it stands still, against the mock over real TLS + HTTP/2. (The back-off is driven
/// the same way in RefusalBackoffTests.connectionsRefused.)
@Suite("Injected clock", .timeLimit(.minutes(5)))
struct InjectedClockTests {
    let support = ClientTestSupport()

    /// A device token the mock answers (it stalls `ClientTestSupport.token`'s).
    static let answeredToken = String(repeating: "ab", count: 32)

    /// A manual clock at the real wall time, one second into its monotonic time.
    func manualClock() -> ManualClock {
        let clock = ManualClock(wallSeconds: SystemClock.shared.wallSeconds())
        clock.advance(seconds: 1)
        return clock
    }

    @Test("Notifications the server never answers end FAILED Timeout when the client's clock passes their deadline, with that latency")
    func deadlinesFollowTheClock() throws {
        var faults = MockFaults()
        faults.stallTokens = [ClientTestSupport.token]
        let server = try support.startMock { $0.faults = faults }
        defer { server.stop() }
        let clock = manualClock()
        let client = try support.makeClient(port: server.port) { $0.timing.clock = clock; $0.timing.deadlineMillis = 60_000 }
        defer { client.close(drainMillis: 0) }
        // One accepted first: the mock allows a token connection one stream until then.
        #expect(support.send(client, count: 1, firstTag: 99, token: Self.answeredToken).accepted == 1)
        #expect(support.collect(client, count: 1).first?.outcome == 1)
        #expect(support.send(client, count: 5).accepted == 5)
        #expect(waitUntil(seconds: 10) { server.stats().stalledRequests == 5 }, "all five reached the server: \(server.stats())")
        #expect(support.collect(client, count: 5, idleMillis: 0).isEmpty, "nothing ends while the clock stands still")
        clock.advance(millis: 59_999)
        #expect(support.collect(client, count: 5, idleMillis: 200).isEmpty, "one millisecond before the deadline")
        // Deadlines are checked every scan interval of the client's clock: one more interval
        // past the deadline, and every one has ended.
        clock.advance(nanos: ClientTimers.scanIntervalNanos + 1_000_000)
        let results = support.collect(client, count: 5, idleMillis: 10_000)
        #expect(results.count == 5, "\(client.stats().in_flight) in flight")
        #expect(results.allSatisfy { $0.outcome == 3 && $0.reason == PUSH_REASON_TIMEOUT.rawValue }, "\(results.first?.reasonText ?? "")")
        // Latency is the clock's too: the 60 s it was moved and at most one scan interval, no
        // matter how much real time the test took.
        let latest = 60_000_000 + Int64(ClientTimers.scanIntervalNanos / 1000) + 1000
        #expect(results.allSatisfy { (60_000_000...latest).contains($0.latency_us) }, "\(results.map(\.latency_us))")
    }

    @Test("An idle connection is PINGed when the client's clock says it has been idle for the idle time")
    func idlePingFollowsTheClock() throws {
        let server = try support.startMock()
        defer { server.stop() }
        let clock = manualClock()
        let client = try support.makeClient(port: server.port) { $0.timing.clock = clock; $0.timing.idlePingMillis = 60_000 }
        defer { client.close(drainMillis: 0) }
        #expect(support.sendAll(client, count: 3).allSatisfy { $0.outcome == 1 })
        #expect(server.stats().pingsReceived == 0)
        clock.advance(millis: 60_001)
        #expect(waitUntil(seconds: 10) { server.stats().pingsReceived == 1 }, "PINGs: \(server.stats().pingsReceived)")
        // The server has the PING; the client must have read its ACK before the clock moves on
        // again (else the PING would look unanswered, or the ACK's read would restart the idle
        // period). The server sends the ACK ahead of any later answer: one round trip proves it.
        #expect(support.sendAll(client, count: 1).allSatisfy { $0.outcome == 1 })
        // Acknowledged: the connection stays, and the next PING needs another idle period.
        clock.advance(millis: 60_001)
        #expect(waitUntil(seconds: 10) { server.stats().pingsReceived == 2 }, "PINGs: \(server.stats().pingsReceived)")
        #expect(support.sendAll(client, count: 3).allSatisfy { $0.outcome == 1 })
        #expect(client.stats().connections_started == 1, "the connection was never replaced")
    }
}
