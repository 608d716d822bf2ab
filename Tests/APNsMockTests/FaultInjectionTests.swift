import Foundation
import Testing
import PushCore
@testable import APNsMock

extension MockTests {
    /// The faults of `MockFaults`, set at start or while running, each seen by an independent
    /// client (apns.md, "Lessons").
    @Suite(.timeLimit(.minutes(5))) struct FaultInjectionTests {
        let pki = TestPKI.shared
        var path: String { "/3/device/\(TestPKI.token)" }

        /// One request to open the stream limit, then `count` more at once.
        func burst(_ server: MockServer, count: Int, then wait: H2Probe.Step) throws -> H2Probe.Result {
            try H2Probe.burst(port: server.port, path: path, authorization: try pki.authorization(), count: count, then: [wait])
        }

        @Test("GOAWAY after N requests carries the JSON reason; later streams are not processed")
        func goawayAfterRequests() throws {
            var faults = MockFaults()
            faults.goawayAfterRequests = 3
            faults.goawayReason = "Shutdown"
            let server = try pki.startServer { $0.faults = faults }
            defer { server.stop() }
            let r = try burst(server, count: 4, then: .wait(closed: true))
            let goaway = try #require(r.goaway, "\(r)")
            #expect(goaway.error_code == 0, "NO_ERROR")
            #expect(goaway.debug == #"{"reason":"Shutdown"}"#)
            #expect(goaway.last_stream_id == 5)
            #expect(r.responses.map(\.stream) == [1, 3, 5], "\(r)")
            #expect(r.closed, "the connection closes once its streams are done")
            #expect(server.record().map(\.stream) == [1, 3, 5])
            #expect(server.stats().goaways == 1)
        }

        @Test("Every Nth stream is refused with RST_STREAM(REFUSED_STREAM) and not recorded")
        func refuseEveryNthStream() throws {
            var faults = MockFaults()
            faults.refuseEveryNthStream = 3
            let server = try pki.startServer { $0.faults = faults }
            defer { server.stop() }
            let r = try burst(server, count: 8, then: .wait(answers: 9))
            // Streams 1, 3, 5, ... : the 3rd, 6th and 9th are streams 5, 11 and 17.
            #expect(r.resets.map(\.stream) == [5, 11, 17], "\(r)")
            #expect(r.resets.allSatisfy { $0.code == 7 })
            #expect(r.responses.count == 6)
            #expect(server.record().map(\.stream) == [1, 3, 7, 9, 13, 15])
            #expect(server.stats().refusedStreams == 3)
        }

        @Test("Tokens marked unregistered or too busy get 410 with the timestamp and 429")
        func tokenFaults() throws {
            let busy = String(repeating: "cd", count: 32)
            var faults = MockFaults()
            faults.unregisteredTokens = [TestPKI.token.uppercased(): 1_700_000_000_456]
            faults.tooManyRequestsTokens = [busy]
            let server = try pki.startServer { $0.faults = faults }
            defer { server.stop() }
            let gone = Tool.nghttp(port: server.port, path: path, headers: try pki.validHeaders(), payloadFile: pki.payloadFile)
            #expect(gone.status == 410)
            #expect(gone.output.contains(#"{"reason":"Unregistered","timestamp":1700000000456}"#), "\(gone.output)")
            let limited = Tool.nghttp(port: server.port, path: "/3/device/\(busy)", headers: try pki.validHeaders(), payloadFile: pki.payloadFile)
            #expect(limited.status == 429)
            #expect(limited.reason == "TooManyRequests")
            // A malformed request for such a token is still judged as malformed first.
            let bad = Tool.nghttp(port: server.port, path: path, headers: ["apns-topic: com.example.app"], payloadFile: pki.payloadFile)
            #expect(bad.reason == "MissingProviderToken")
        }

        @Test("Every Nth request gets 500 or 503; 500 wins when both apply")
        func statusEveryNth() throws {
            var faults = MockFaults()
            faults.status500EveryNth = 4
            faults.status503EveryNth = 5
            let server = try pki.startServer { $0.faults = faults }
            defer { server.stop() }
            let result = Tool.h2load(Tool.h2loadArguments(port: server.port, count: 20, authorization: try pki.authorization(),
                                                          payloadFile: pki.payloadFile))
            #expect(result.status5xx == 8, "\(result.output)")
            let statuses = server.record().map(\.status)
            #expect(statuses.count == 20)
            let expected = (1...20).map { $0 % 4 == 0 ? 500 : $0 % 5 == 0 ? 503 : 200 }
            #expect(statuses == expected)
            #expect(server.record().filter { $0.status == 503 }.allSatisfy { $0.reason == "ServiceUnavailable" })
            #expect(server.record().filter { $0.status == 500 }.allSatisfy { $0.reason == "InternalServerError" })
        }

        @Test("Random 500s and 503s follow the rate and repeat with the seed")
        func statusRates() throws {
            var faults = MockFaults()
            faults.status500Rate = 0.25
            faults.status503Rate = 0.25
            faults.seed = 42
            let server = try pki.startServer { $0.faults = faults }
            defer { server.stop() }
            let args = Tool.h2loadArguments(port: server.port, count: 400, authorization: try pki.authorization(), payloadFile: pki.payloadFile)
            _ = Tool.h2load(args)
            let first = server.record().map(\.status)
            let errors = first.filter { $0 != 200 }.count
            // Expected 400 × (0.25 + 0.75 × 0.25) = 175.
            #expect((125...225).contains(errors), "\(errors) errors")
            #expect(first.contains(500) && first.contains(503))
            // The same seed again (setting faults restarts the sequence): the same answers.
            server.resetRecord()
            server.setFaults(faults)
            _ = Tool.h2load(args)
            #expect(server.record().map(\.status) == first)
            // A rate of 1 fails everything.
            faults.status500Rate = 1
            server.setFaults(faults)
            server.resetRecord()
            let all = Tool.h2load(Tool.h2loadArguments(port: server.port, count: 10, authorization: try pki.authorization(),
                                                       payloadFile: pki.payloadFile))
            #expect(all.status5xx == 10, "\(all.output)")
        }

        @Test("Stalled requests are recorded with status 0 and never answered")
        func stalls() throws {
            let stuck = String(repeating: "ef", count: 32)
            var faults = MockFaults()
            faults.stallEveryNth = 2
            faults.stallTokens = [stuck]
            let server = try pki.startServer { $0.faults = faults }
            defer { server.stop() }
            let auth = try pki.authorization()
            let r = try H2Probe.run(port: server.port, [
                .send(path: path, headers: H2Probe.headers(authorization: auth)), .wait(answers: 1, settings: 2),
                .send(path: path, headers: H2Probe.headers(authorization: auth), count: 3),
                .send(path: "/3/device/\(stuck)", headers: H2Probe.headers(authorization: auth)),
                .wait(answers: 2, timeout: 5),
                // Nothing else comes: the stalled streams stay open.
                .ping, .wait(answers: 99, pingAcks: 1, timeout: 0.5),
            ])
            // Requests 1..5 (streams 1, 3, 5, 7 and the stuck token's 9): 2 and 4 stall by
            // count, 5 by its token.
            #expect(r.responses.map(\.stream) == [1, 5], "\(r)")
            let record = server.record()
            #expect(record.map(\.status) == [200, 0, 200, 0, 0])
            #expect(record.filter { $0.status == 0 }.allSatisfy { $0.reason == "stalled" })
            #expect(record.last?.deviceToken == stuck)
            #expect(server.stats().stalledRequests == 3)
        }

        @Test("Answers are delayed by the configured time without holding up the server")
        func responseDelay() throws {
            var faults = MockFaults()
            faults.responseDelayMillis = 400
            // Accept-all, so that h2load may open its 20 streams at once.
            let server = try pki.startServer {
                $0.tokenKeys = []
                $0.faults = faults
            }
            defer { server.stop() }
            let start = Date()
            let result = Tool.h2load(Tool.h2loadArguments(port: server.port, count: 40, streams: 20,
                                                          authorization: nil, payloadFile: pki.payloadFile))
            let elapsed = Date().timeIntervalSince(start)
            #expect(result.status2xx == 40, "\(result.output)")
            // 20 streams at once: two rounds of 400 ms, not forty.
            #expect(elapsed >= 0.8, "\(elapsed) s")
            #expect(elapsed < 8, "delays must overlap: \(elapsed) s")
        }

        @Test("Delayed answers arrive one TLS record each, as APNs's spread-out answers do; undelayed ones share records")
        func delayedAnswersOneRecordEach() throws {
            // The latency benchmark measures what a client pays per record: the batching of a
            // tick's answers into one socket write must not merge their records.
            for delay in [0, 30] {
                var faults = MockFaults()
                faults.responseDelayMillis = delay
                let server = try pki.startServer { $0.faults = faults }
                defer { server.stop() }
                let r = try burst(server, count: 40, then: .wait(answers: 41, timeout: 10))
                #expect(r.responses.count == 41, "\(r)")
                let records = r.recordsRead
                try #require(records.count == 2, "\(r)")
                let burstRecords = records[1] - records[0]
                if delay > 0 {
                    #expect(burstRecords >= 40, "\(burstRecords) records for 40 delayed answers")
                } else {
                    #expect(burstRecords <= 10, "\(burstRecords) records for 40 answers at once")
                }
            }
        }

        @Test("A connection is killed abruptly after N answered requests")
        func killAfterRequests() throws {
            var faults = MockFaults()
            faults.killConnectionAfterRequests = 3
            let server = try pki.startServer { $0.faults = faults }
            defer { server.stop() }
            let r = try burst(server, count: 5, then: .wait(closed: true))
            #expect(r.responses.map(\.stream) == [1, 3, 5], "\(r)")
            #expect(r.goaway == nil, "no GOAWAY before a kill")
            #expect(r.closed)
            #expect(server.record().count == 3)
            #expect(server.stats().killedConnections == 1)
        }

        @Test("New connections are refused until the given time, then accepted again")
        func refuseConnections() throws {
            let server = try pki.startServer()
            defer { server.stop() }
            var faults = MockFaults()
            faults.refuseConnectionsUntil = MonotonicTime.nanos() + 600_000_000
            server.setFaults(faults)
            let refused = Tool.nghttp(port: server.port, path: path, headers: try pki.validHeaders(), payloadFile: pki.payloadFile)
            #expect(refused.status == nil, "\(refused.output)")
            #expect(server.stats().refusedConnections >= 1)
            let headers = try pki.validHeaders()
            #expect(eventually(timeout: 5) {
                Tool.nghttp(port: server.port, path: path, headers: headers, payloadFile: pki.payloadFile).status == 200
            })
        }

        @Test("Faults set while running apply to later requests and restart the counters")
        func setFaultsWhileRunning() throws {
            let server = try pki.startServer()
            defer { server.stop() }
            let args = Tool.h2loadArguments(port: server.port, count: 3, authorization: try pki.authorization(), payloadFile: pki.payloadFile)
            #expect(Tool.h2load(args).status2xx == 3)
            var faults = MockFaults()
            faults.status500EveryNth = 2
            server.setFaults(faults)
            #expect(server.faults() == faults)
            _ = Tool.h2load(args)
            server.setFaults(faults)
            _ = Tool.h2load(args)
            #expect(server.record().map(\.status) == [200, 200, 200, 200, 500, 200, 200, 500, 200])
            server.setFaults(MockFaults())
            #expect(Tool.h2load(args).status2xx == 3)
        }
    }
}
