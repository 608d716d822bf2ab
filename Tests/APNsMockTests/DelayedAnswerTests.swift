import Foundation
import Testing
import PushCore
@testable import APNsMock

extension MockTests {
    /// Delayed answers (`responseDelayMillis`) whose connection goes away before they are due:
    /// the timers hold such a connection (one reference per connection, not per answer) until
    /// its last scheduled answer has come due, then drop the answers and let it go.
    @Suite(.timeLimit(.minutes(5))) struct DelayedAnswerTests {
        let pki = TestPKI.shared
        var path: String { "/3/device/\(TestPKI.token)" }

        /// A server whose answers come `delayMillis` late, with `adjust`'s other faults.
        func startServer(delayMillis: Int, _ adjust: (inout MockFaults) -> Void = { _ in }) throws -> MockServer {
            var faults = MockFaults()
            faults.responseDelayMillis = delayMillis
            adjust(&faults)
            return try pki.startServer { $0.faults = faults }
        }

        @Test("A client that leaves with answers scheduled: they are dropped, and the next client is answered after the delay")
        func clientLeavesBeforeItsAnswers() throws {
            let server = try startServer(delayMillis: 300)
            defer { server.stop() }
            let auth = try pki.authorization()
            // One answer (it raises the stream limit), then 20 requests and away: their
            // answers are scheduled on a connection that is gone when they come due.
            let gone = try H2Probe.burst(port: server.port, path: path, authorization: auth, count: 20, then: [])
            #expect(gone.responses.count == 1, "\(gone)")
            #expect(eventually { server.stats().requests == 21 }, "\(server.stats())")

            // The same again on a new connection, this time waiting: every answer arrives, and
            // not before the delay (the dropped answers came due in between).
            let start = Date()
            let next = try H2Probe.burst(port: server.port, path: path, authorization: auth, count: 20,
                                         then: [.wait(answers: 21, timeout: 10)])
            let elapsed = Date().timeIntervalSince(start)
            #expect(next.responses.count == 21, "\(next)")
            #expect(next.responses.allSatisfy { $0.status == 200 }, "\(next)")
            #expect(elapsed >= 0.6, "two rounds of 300 ms took \(elapsed) s")
            #expect(server.stats().requests == 42)
        }

        @Test("A connection the timers hold for its delayed answers is freed once they come due, and when the server stops")
        func heldConnectionsAreFreed() throws {
            let auth = try pki.authorization()
            let server = try startServer(delayMillis: 200)
            defer { server.stop() }
            _ = try H2Probe.burst(port: server.port, path: path, authorization: auth, count: 20, then: [])
            #expect(eventually { server.stats().requests == 21 }, "\(server.stats())")
            #expect(eventually { server.stats().liveConnectionObjects == 0 }, "the last answer's release frees it: \(server.stats())")

            // Stopped while the answers are still scheduled (a second each): stopping gives the
            // connection back.
            let stopping = try startServer(delayMillis: 1000)
            _ = try H2Probe.burst(port: stopping.port, path: path, authorization: auth, count: 20, then: [])
            #expect(eventually { stopping.stats().requests == 21 }, "\(stopping.stats())")
            stopping.stop()
            #expect(stopping.stats().liveConnectionObjects == 0, "\(stopping.stats())")
        }

        @Test("With a delay, the other request faults still apply: every second request fails with 500, late")
        func faultsStillApply() throws {
            let server = try startServer(delayMillis: 100) { $0.status500EveryNth = 2 }
            defer { server.stop() }
            let start = Date()
            let r = try H2Probe.burst(port: server.port, path: path, authorization: try pki.authorization(), count: 3,
                                      then: [.wait(answers: 4, timeout: 10)])
            #expect(Date().timeIntervalSince(start) >= 0.2, "two rounds of 100 ms")
            let statuses = r.responses.sorted { ($0.stream ?? 0) < ($1.stream ?? 0) }.map(\.status)
            #expect(statuses == [200, 500, 200, 500], "\(r)")
            #expect(server.record().map(\.status) == [200, 500, 200, 500])
        }
    }
}
