import Foundation
import Testing
import PushCore
@testable import APNsMock

extension MockTests {
    /// Delayed answers (`responseDelayMillis`) whose connection goes away before they are due:
    /// the timers hold such a connection (one reference per connection, not per answer) until
    /// its last scheduled answer has come due, then drop the answers and let it go.
    @Suite struct DelayedAnswerTests {
        let pki = TestPKI.shared
        var path: String { "/3/device/\(TestPKI.token)" }

        @Test("A client that leaves with answers scheduled: they are dropped, and the next client is answered after the delay")
        func clientLeavesBeforeItsAnswers() throws {
            var faults = MockFaults()
            faults.responseDelayMillis = 300
            let server = try pki.startServer { $0.faults = faults }
            defer { server.stop() }
            let headers = H2Probe.headers(authorization: try pki.authorization())
            // One answer (it raises the stream limit), then 20 requests and away: their
            // answers are scheduled on a connection that is gone when they come due.
            let gone = try H2Probe.run(port: server.port, [
                .send(path: path, headers: headers), .wait(answers: 1, settings: 2),
                .send(path: path, headers: headers, count: 20),
            ])
            #expect(gone.responses.count == 1, "\(gone)")
            #expect(eventually { server.stats().requests == 21 }, "\(server.stats())")

            // The same again on a new connection, this time waiting: every answer arrives, and
            // not before the delay (the dropped answers came due in between).
            let start = Date()
            let next = try H2Probe.run(port: server.port, [
                .send(path: path, headers: headers), .wait(answers: 1, settings: 2),
                .send(path: path, headers: headers, count: 20), .wait(answers: 21, timeout: 10),
            ])
            let elapsed = Date().timeIntervalSince(start)
            #expect(next.responses.count == 21, "\(next)")
            #expect(next.responses.allSatisfy { $0.status == 200 }, "\(next)")
            #expect(elapsed >= 0.6, "two rounds of 300 ms took \(elapsed) s")
            #expect(server.stats().requests == 42)
        }

        @Test("With a delay, the other request faults still apply: every second request fails with 500, late")
        func faultsStillApply() throws {
            var faults = MockFaults()
            faults.responseDelayMillis = 100
            faults.status500EveryNth = 2
            let server = try pki.startServer { $0.faults = faults }
            defer { server.stop() }
            let headers = H2Probe.headers(authorization: try pki.authorization())
            let start = Date()
            let r = try H2Probe.run(port: server.port, [
                .send(path: path, headers: headers), .wait(answers: 1, settings: 2),
                .send(path: path, headers: headers, count: 3), .wait(answers: 4, timeout: 10),
            ])
            #expect(Date().timeIntervalSince(start) >= 0.2, "two rounds of 100 ms")
            let statuses = r.responses.sorted { ($0.stream ?? 0) < ($1.stream ?? 0) }.map(\.status)
            #expect(statuses == [200, 500, 200, 500], "\(r)")
            #expect(server.record().map(\.status) == [200, 500, 200, 500])
        }
    }
}
