import Testing
import PushCore
@testable import APNsMock

extension MockTests {
    /// Token and certificate authentication as APNs does them (apns.md, "Token
    /// authentication", "Certificate authentication").
    @Suite(.timeLimit(.minutes(5))) struct AuthenticationTests {
        let pki = TestPKI.shared
        var path: String { "/3/device/\(TestPKI.token)" }

        /// Token auth with TESTKEY001 (team TEAM123456) and WRONGKEY01 (team TEAM654321).
        func startTwoTeamServer(_ adjust: (inout MockServer.Configuration) -> Void = { _ in }) throws -> MockServer {
            try pki.startServer {
                $0.tokenKeys.append(try MockServer.TokenKey(keyID: TestPKI.otherKeyID, teamID: TestPKI.otherTeamID,
                                                            file: pki.wrongAuthKey))
                adjust(&$0)
            }
        }

        func otherTeamToken() throws -> String {
            try pki.authorization(keyFile: pki.wrongAuthKey, keyID: TestPKI.otherKeyID, teamID: TestPKI.otherTeamID)
        }

        @Test("Any configured key verifies; a connection is bound to the team of its first token")
        func teamBinding() throws {
            let server = try startTwoTeamServer()
            defer { server.stop() }
            // Each team on a connection of its own: both accepted.
            let other = Tool.nghttp(port: server.port, path: path, headers: ["apns-topic: com.example.app", "authorization: " + (try otherTeamToken())],
                                    payloadFile: pki.payloadFile)
            #expect(other.status == 200, "\(other.output)")
            // Both teams on one connection: the second team is refused.
            let r = try H2Probe.run(port: server.port, [
                .send(path: path, headers: H2Probe.headers(authorization: try pki.authorization())),
                .wait(answers: 1),
                .send(path: path, headers: H2Probe.headers(authorization: try otherTeamToken())),
                .wait(answers: 2),
            ])
            #expect(r.responses.map(\.status) == [200, 403], "\(r)")
            #expect(r.responses.last?.body == #"{"reason":"InvalidProviderToken"}"#)
        }

        @Test("A connection changing its token sooner than the update interval gets TooManyProviderTokenUpdates")
        func tokenUpdates() throws {
            let now = SystemClock.shared.wallSeconds()
            let first = try pki.authorization(now: now)
            let second = try pki.authorization(now: now - 10)
            let server = try pki.startServer()
            defer { server.stop() }
            let r = try H2Probe.run(port: server.port, [
                .send(path: path, headers: H2Probe.headers(authorization: first)), .wait(answers: 1),
                .send(path: path, headers: H2Probe.headers(authorization: second)), .wait(answers: 2),
                // The first token goes on working.
                .send(path: path, headers: H2Probe.headers(authorization: first)), .wait(answers: 3),
            ])
            #expect(r.responses.map(\.status) == [200, 429, 200], "\(r)")
            #expect(r.responses.dropFirst().first?.body == #"{"reason":"TooManyProviderTokenUpdates"}"#)

            // With no minimum interval the same change is an ordinary update.
            let lenient = try pki.startServer { $0.minTokenUpdateIntervalSeconds = 0 }
            defer { lenient.stop() }
            let ok = try H2Probe.run(port: lenient.port, [
                .send(path: path, headers: H2Probe.headers(authorization: first)), .wait(answers: 1),
                .send(path: path, headers: H2Probe.headers(authorization: second)), .wait(answers: 2),
            ])
            #expect(ok.responses.map(\.status) == [200, 200], "\(ok)")
        }

        @Test("The same token signed again is not an update")
        func resignedTokenIsNotAnUpdate() throws {
            let now = SystemClock.shared.wallSeconds()
            // ES256 signatures are randomized: two signings of the same claims differ in bytes.
            let a = try pki.authorization(now: now), b = try pki.authorization(now: now)
            #expect(a != b)
            let server = try pki.startServer()
            defer { server.stop() }
            let r = try H2Probe.run(port: server.port, [
                .send(path: path, headers: H2Probe.headers(authorization: a)), .wait(answers: 1),
                .send(path: path, headers: H2Probe.headers(authorization: b)), .wait(answers: 2),
            ])
            #expect(r.responses.map(\.status) == [200, 200], "\(r)")
        }

        @Test("A token cached by a connection expires an hour after its iat")
        func cachedTokenExpires() throws {
            let clock = ManualClock(wallSeconds: SystemClock.shared.wallSeconds())
            let token = try pki.authorization(now: clock.wallSeconds())
            let server = try pki.startServer { $0.clock = clock }
            defer { server.stop() }
            // The same connection before and after the hour: the second request takes the
            // cached-token path, which must age the token too.
            let r = try H2Probe.run(port: server.port, [
                .send(path: path, headers: H2Probe.headers(authorization: token)), .wait(answers: 1),
                .hold,
                .send(path: path, headers: H2Probe.headers(authorization: token)), .wait(answers: 2),
            ], whileHeld: { clock.advance(seconds: 3601) })
            #expect(r.responses.map(\.status) == [200, 403], "\(r)")
            #expect(r.responses.last?.body == #"{"reason":"ExpiredProviderToken"}"#)
        }

        @Test("A certificate from the configured CA authenticates, and its topics decide")
        func certificateTopics() throws {
            let server = try pki.startServer {
                $0.tokenKeys = []
                $0.clientCAFile = pki.caCert
            }
            defer { server.stop() }
            func send(_ cert: String, _ headers: [String]) -> Tool.Response {
                Tool.nghttp(port: server.port, path: path, headers: headers, payloadFile: pki.payloadFile,
                            clientCertificate: pki.clientCertificate(cert))
            }
            // Apple's multi-topic shape: the listed topics only, and apns-topic is required.
            #expect(send("apns-multi", ["apns-topic: com.example.app"]).status == 200)
            #expect(send("apns-multi", ["apns-topic: com.example.app.voip", "apns-push-type: voip"]).status == 200)
            #expect(send("apns-multi", ["apns-topic: com.other.app"]).reason == "TopicDisallowed")
            #expect(send("apns-multi", []).reason == "MissingTopic")
            // Single topic: the subject's UID is the default topic.
            #expect(send("apns-single", []).status == 200)
            #expect(send("apns-single", ["apns-topic: com.example.single.voip", "apns-push-type: voip"]).status == 200)
            #expect(send("apns-single", ["apns-topic: com.example.app"]).reason == "TopicDisallowed")
            // A certificate naming no topics restricts none.
            #expect(send("apns-plain", ["apns-topic: any.thing"]).status == 200)
            #expect(server.stats().connections == 8)
        }

        @Test("Without a client certificate a certificate-only server lets no request through")
        func certificateRequired() throws {
            let server = try pki.startServer {
                $0.tokenKeys = []
                $0.clientCAFile = pki.caCert
            }
            defer { server.stop() }
            let r = Tool.nghttp(port: server.port, path: path, headers: ["apns-topic: com.example.app"], payloadFile: pki.payloadFile)
            #expect(r.status == nil, "\(r.output)")
            #expect(server.stats().requests == 0)
        }

        @Test("With token keys as well, connections without a certificate use tokens")
        func certificateOrToken() throws {
            let server = try pki.startServer { $0.clientCAFile = pki.caCert }
            defer { server.stop() }
            let token = Tool.nghttp(port: server.port, path: path, headers: try pki.validHeaders(), payloadFile: pki.payloadFile)
            #expect(token.status == 200, "\(token.output)")
            let none = Tool.nghttp(port: server.port, path: path, headers: ["apns-topic: com.example.app"], payloadFile: pki.payloadFile)
            #expect(none.reason == "MissingProviderToken")
            let cert = Tool.nghttp(port: server.port, path: path, headers: ["apns-topic: com.example.app"], payloadFile: pki.payloadFile,
                                   clientCertificate: pki.clientCertificate("apns-multi"))
            #expect(cert.status == 200, "\(cert.output)")
        }

        @Test("Certificate topics are read from the subject UID and Apple's extension")
        func topicsFromDER() {
            // SEQUENCE { UTF8String "a.b", SEQUENCE { UTF8String "app" }, UTF8String "a.b.voip", SEQUENCE { UTF8String "voip" } }
            let der: [UInt8] = [0x30, 0x1E, 0x0C, 0x03] + Array("a.b".utf8) + [0x30, 0x05, 0x0C, 0x03] + Array("app".utf8)
                + [0x0C, 0x08] + Array("a.b.voip".utf8) + [0x30, 0x06, 0x0C, 0x04] + Array("voip".utf8)
            #expect(der.withUnsafeBytes { CertificateTopics.topics(inDER: $0) } == ["a.b", "a.b.voip"])
            let multi = CertificateTopics(subjectTopic: "a.b", listedTopics: ["a.b", "a.b.voip"])
            #expect(multi.defaultTopic == nil)
            #expect(multi.allowed == ["a.b", "a.b.voip"])
            let single = CertificateTopics(subjectTopic: "a.b", listedTopics: [])
            #expect(single.defaultTopic == "a.b")
            #expect(single.allowed == ["a.b", "a.b.voip", "a.b.complication"])
            #expect(CertificateTopics(subjectTopic: nil, listedTopics: []).allowed.isEmpty)
        }
    }
}
