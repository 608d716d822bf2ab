import Testing
import PushCore
@testable import APNsMock

extension MockTests {
    /// HTTP/2 behaviour like APNs's (apns.md, "Transport"; "Lessons" 1 and 2): the stream
    /// limit that starts at 1 for token connections, its raise and drop, and the GOAWAY for
    /// clients that exceed it.
    @Suite(.timeLimit(.minutes(5))) struct StreamLimitTests {
        let pki = TestPKI.shared
        var path: String { "/3/device/\(TestPKI.token)" }

        @Test("Token connections start at one stream and get the configured limit after the first 200")
        func raisedAfterFirstSuccess() throws {
            let server = try pki.startServer { $0.maxConcurrentStreams = 50 }
            defer { server.stop() }
            let auth = try pki.authorization()
            let r = try H2Probe.run(port: server.port, [
                .send(path: path, headers: H2Probe.headers(authorization: auth)), .wait(answers: 1, settings: 2),
                .send(path: path, headers: H2Probe.headers(authorization: auth), count: 50), .wait(answers: 51),
            ])
            #expect(r.streamLimits == [1, 50], "\(r)")
            #expect(r.responses.count == 51)
            #expect(r.responses.allSatisfy { $0.status == 200 }, "\(r)")
            #expect(r.goaway == nil)
            #expect(server.stats().peakConcurrentStreams > 1)
        }

        @Test("A rejection does not raise the limit; only a 200 does")
        func rejectionDoesNotRaise() throws {
            let server = try pki.startServer()
            defer { server.stop() }
            let auth = try pki.authorization()
            let r = try H2Probe.run(port: server.port, [
                .send(path: "/3/device/xyz", headers: H2Probe.headers(authorization: auth)), .wait(answers: 1, settings: 1),
                .send(path: path, headers: H2Probe.headers(authorization: auth)), .wait(answers: 2, settings: 2),
            ])
            #expect(r.responses.map(\.status) == [400, 200], "\(r)")
            #expect(r.streamLimits == [1, 1000], "\(r)")
            #expect(r.events.firstIndex { $0.max_concurrent_streams == 1000 }! > r.events.firstIndex { $0.status == 200 }!,
                    "the raise follows the 200")
        }

        @Test("Accept-all and certificate connections start at the configured limit")
        func fullLimitWithoutTokens() throws {
            let server = try pki.startServer {
                $0.tokenKeys = []
                $0.maxConcurrentStreams = 7
            }
            defer { server.stop() }
            let r = try H2Probe.run(port: server.port, [
                .send(path: path, headers: H2Probe.headers(authorization: nil), count: 7), .wait(answers: 7),
            ])
            #expect(r.streamLimits == [7], "\(r)")
            #expect(r.responses.count == 7 && r.responses.allSatisfy { $0.status == 200 }, "\(r)")
        }

        @Test("A second stream before the first success is answered with APNs's GOAWAY(REFUSED_STREAM)")
        func violationBeforeRaise() throws {
            let server = try pki.startServer()
            defer { server.stop() }
            let r = try H2Probe.run(port: server.port, [
                .send(path: path, headers: H2Probe.headers(authorization: try pki.authorization()), count: 3, force: true),
                .wait(closed: true),
            ])
            let goaway = try #require(r.goaway, "\(r)")
            #expect(goaway.error_code == 7, "REFUSED_STREAM")
            #expect(goaway.debug == "Maximum active streams violated for this endpoint.")
            #expect(goaway.last_stream_id == 1)
            #expect(r.closed)
            // Stream 1 was processed and answered; 3 and 5 were not.
            #expect(r.responses.map(\.stream) == [1], "\(r)")
            #expect(server.record().map(\.stream) == [1])
            #expect(server.stats().streamLimitViolations == 1)
            #expect(server.stats().goaways == 1)
        }

        @Test("Exceeding the raised limit is a violation too")
        func violationAfterRaise() throws {
            let server = try pki.startServer { $0.maxConcurrentStreams = 3 }
            defer { server.stop() }
            let auth = try pki.authorization()
            let r = try H2Probe.run(port: server.port, [
                .send(path: path, headers: H2Probe.headers(authorization: auth)), .wait(answers: 1, settings: 2),
                .send(path: path, headers: H2Probe.headers(authorization: auth), count: 5, force: true),
                .wait(closed: true),
            ])
            let goaway = try #require(r.goaway, "\(r)")
            #expect(goaway.error_code == 7)
            #expect(goaway.debug == "Maximum active streams violated for this endpoint.")
            // Streams 3, 5, 7 fit the limit of 3 and were processed; 9 broke it.
            #expect(server.record().map(\.stream) == [1, 3, 5, 7])
            #expect(goaway.last_stream_id == 7)
            #expect(Set(r.responses.map(\.stream)) == [1, 3, 5, 7], "\(r)")
        }

        @Test("After a rejection the limit drops to 1, and the next 200 raises it again")
        func dropAfterRejection() throws {
            let server = try pki.startServer {
                $0.maxConcurrentStreams = 20
                $0.faults.dropLimitToOneAfterRejection = true
            }
            defer { server.stop() }
            let auth = try pki.authorization()
            let r = try H2Probe.run(port: server.port, [
                .send(path: path, headers: H2Probe.headers(authorization: auth)), .wait(answers: 1, settings: 2),
                .send(path: "/3/device/xyz", headers: H2Probe.headers(authorization: auth)), .wait(answers: 2, settings: 3),
                .send(path: path, headers: H2Probe.headers(authorization: auth)), .wait(answers: 3, settings: 4),
                .send(path: path, headers: H2Probe.headers(authorization: auth), count: 20), .wait(answers: 23),
            ])
            #expect(r.streamLimits == [1, 20, 1, 20], "\(r)")
            #expect(r.responses.map(\.status) == [200, 400] + Array(repeating: 200, count: 21), "\(r)")
            #expect(r.goaway == nil)
        }

        @Test("Once the client acknowledged the drop, a second stream is a violation")
        func violationAfterDrop() throws {
            let server = try pki.startServer { $0.faults.dropLimitToOneAfterRejection = true }
            defer { server.stop() }
            let auth = try pki.authorization()
            let r = try H2Probe.run(port: server.port, [
                .send(path: path, headers: H2Probe.headers(authorization: auth)), .wait(answers: 1, settings: 2),
                .send(path: "/3/device/xyz", headers: H2Probe.headers(authorization: auth)), .wait(answers: 2, settings: 3),
                // The probe acknowledges the SETTINGS as it reads them; a PING round trip makes
                // sure the ACK has reached the server.
                .ping, .wait(pingAcks: 1),
                .send(path: path, headers: H2Probe.headers(authorization: auth), count: 2, force: true), .wait(closed: true),
            ])
            #expect(r.goaway?.error_code == 7, "\(r)")
            #expect(server.stats().streamLimitViolations == 1)
        }

        @Test("A lenient server resets streams opened before its SETTINGS were acknowledged, without GOAWAY")
        func lenientInitialLimit() throws {
            let server = try pki.startServer { $0.strictInitialStreamLimit = false }
            defer { server.stop() }
            let r = try H2Probe.run(port: server.port, [
                .send(path: path, headers: H2Probe.headers(authorization: try pki.authorization()), count: 3, force: true),
                .wait(answers: 3),
            ])
            #expect(r.goaway == nil, "\(r)")
            #expect(r.responses.map(\.stream) == [1])
            #expect(r.resets.map(\.stream) == [3, 5])
            #expect(r.resets.allSatisfy { $0.code == 7 })
            #expect(server.stats().refusedStreams == 2)
            #expect(server.record().map(\.stream) == [1])
        }

        @Test("h2load keeps its streams in flight on an accept-all server")
        func h2loadConcurrency() throws {
            let server = try pki.startServer { $0.tokenKeys = [] }
            defer { server.stop() }
            let result = Tool.h2load(Tool.h2loadArguments(port: server.port, count: 2000, streams: 100,
                                                          authorization: nil, payloadFile: pki.payloadFile))
            #expect(result.succeeded == 2000, "\(result.output)")
            #expect(result.status2xx == 2000)
            let stats = server.stats()
            #expect(stats.peakConcurrentStreams > 1, "\(stats)")
            #expect(stats.peakConcurrentStreams <= 100)
            #expect(stats.streamLimitViolations == 0)
        }

        @Test("PING frames are answered")
        func ping() throws {
            let server = try pki.startServer()
            defer { server.stop() }
            let r = try H2Probe.run(port: server.port, [.ping, .wait(pingAcks: 1), .ping, .wait(pingAcks: 2)])
            #expect(r.events.filter { $0.type == "ping_ack" }.count == 2, "\(r)")
        }
    }
}
