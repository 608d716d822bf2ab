import Foundation
import Testing
import CSwiftPushABI
import PushCore
@testable import APNsMock
@testable import PushClientCore

/// Everything APNs speaks, end to end: each push type, priority, expiration and collapse-id
/// case goes through the client to the mock, and the mock's record confirms the headers it
/// received; each retry class ends as it should.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct NotificationSemanticsTests {
    let support = ClientTestSupport()

    /// One notification's fields, as a test case names them.
    struct Case: Sendable, CustomStringConvertible {
        var pushType: PushType = .alert
        var topic: String
        var priority: Int32 = 0
        var expiration: Int64? = nil
        var collapseId: String? = nil
        var payload = #"{"aps":{"alert":"hi"}}"#
        var description: String {
            "\(pushType.headerValue) \(topic) priority \(priority) expiration \(expiration.map(String.init) ?? "-") collapse \(collapseId ?? "-")"
        }
    }

    /// Sends one notification built from `c` with `tag`; returns the send's error, if any.
    func send(_ client: PushClient, _ c: Case, tag: UInt64) -> ClientError? {
        ClientTestSupport.token.withCString { token in
            c.topic.withCString { topic in
                c.payload.withCString { payload in
                    (c.collapseId ?? "").withCString { collapse in
                        var n = push_notification()
                        n.push_type = c.pushType.rawValue
                        n.priority = c.priority
                        n.device_token = token
                        n.topic = topic
                        n.payload = payload
                        n.tag = tag
                        if c.collapseId != nil { n.collapse_id = collapse }
                        if let e = c.expiration {
                            n.flags = UInt32(PUSH_NOTIFICATION_HAS_EXPIRATION.rawValue)
                            n.expiration = e
                        }
                        return client.send(&n, count: 1, timeoutMillis: 1000).error
                    }
                }
            }
        }
    }

    static let bundle = "com.example.app"

    /// Every push type with the topic derived from the bundle id (mdm takes the MDM topic as is).
    static let pushTypeCases: [Case] = PushType.allCases.map { type in
        let derived = Array(bundle.utf8).withUnsafeBytes { type.topic(forBundleID: $0) }
        let topic = type == .mdm ? "com.apple.mgmt.External.example" : ((try? derived.get()) ?? bundle)
        var c = Case(pushType: type, topic: topic)
        if type == .background { c.payload = #"{"aps":{"content-available":1}}"# }
        if type == .liveactivity { c.payload = #"{"aps":{"timestamp":1700000000,"event":"update","content-state":{}}}"# }
        return c
    }

    static let headerCases: [Case] = pushTypeCases + [
        Case(topic: bundle, priority: 10),
        Case(topic: bundle, priority: 5),
        Case(topic: bundle, priority: 1),
        Case(topic: bundle, expiration: 0),
        Case(topic: bundle, expiration: 1_900_000_000),
        Case(topic: bundle, collapseId: "score-update"),
        Case(topic: bundle, collapseId: String(repeating: "c", count: 64)),
    ]

    @Test("Every push type, priority, expiration and collapse id reaches the server as the headers APNs expects")
    func headersAsSent() throws {
        let server = try support.startMock()
        defer { server.stop() }
        let client = try support.makeClient(port: server.port)
        defer { client.close(drainMillis: 0) }
        let cases = Self.headerCases
        for (i, c) in cases.enumerated() {
            #expect(send(client, c, tag: UInt64(i)) == nil, "\(c)")
        }
        let results = support.collect(client, count: cases.count)
        #expect(results.count == cases.count)
        let records = Dictionary(server.record().map { ($0.apnsId, $0) }, uniquingKeysWith: { a, _ in a })
        for r in results {
            let c = cases[Int(r.tag)]
            #expect(r.outcome == 1, "\(c): \(r.reasonText)")
            guard let rec = records[r.apnsID] else {
                Issue.record("no record of \(c)")
                continue
            }
            #expect(rec.pushType == c.pushType, "\(c)")
            #expect(rec.topic == c.topic, "\(c)")
            #expect(rec.priority == Int(c.priority == 0 ? c.pushType.defaultPriority : c.priority), "\(c)")
            #expect(rec.expiration == c.expiration, "\(c)")
            #expect(rec.collapseId == c.collapseId, "\(c)")
            #expect(rec.hadAuthorization, "token auth sends authorization")
        }
    }

    @Test("Cases APNs would refuse are refused at send, with the rule in the message", arguments: [
        (Case(topic: bundle, collapseId: String(repeating: "c", count: 65)), PushStatus.badCollapseId, "collapse id"),
        (Case(pushType: .voip, topic: bundle), .badTopic, ".voip"),
        (Case(pushType: .background, topic: bundle, priority: 10), .badPriority, "priority 5"),
        (Case(topic: bundle, priority: 7), .badPriority, "10, 5 or 1"),
        (Case(topic: bundle, expiration: -5), .badExpiration, "expiration"),
        (Case(topic: bundle, payload: String(repeating: " ", count: 4097)), .payloadTooLarge, "4096"),
    ])
    func refusedLocally(_ c: Case, _ status: PushStatus, _ words: String) throws {
        let server = try support.startMock()
        defer { server.stop() }
        let client = try support.makeClient(port: server.port)
        defer { client.close(drainMillis: 0) }
        let error = send(client, c, tag: 1)
        #expect(error?.status == status, "\(c)")
        #expect(error?.description.contains(words) == true, "\(error?.description ?? "accepted")")
        #expect(server.record().isEmpty, "nothing reached the server")
    }

    @Test("Certificate authentication sends no authorization header")
    func certificateAuthSendsNoAuthorization() throws {
        let pki = support.pki
        let server = try support.startMock { $0.clientCAFile = pki + "/ca.pem"; $0.tokenKeys = [] }
        defer { server.stop() }
        let client = try support.makeClient(port: server.port) {
            $0.credentials.tokenKeyPEM = nil
            $0.credentials.clientCertificate = .pem(certificateFile: pki + "/client.pem", keyFile: pki + "/client.key")
        }
        defer { client.close(drainMillis: 0) }
        #expect(support.sendAll(client, count: 3).allSatisfy { $0.outcome == 1 })
        #expect(server.record().allSatisfy { !$0.hadAuthorization })
    }

    @Test("TooManyProviderTokenUpdates retires the connection and the notification is resent on a new one")
    func tokenChurnRetiresTheConnection() throws {
        let server = try support.startMock()
        defer { server.stop() }
        let clock = ManualClock(wallSeconds: SystemClock.shared.wallSeconds())
        let client = try support.makeClient(port: server.port, connections: 1) { $0.timing.clock = clock }
        defer { client.close(drainMillis: 0) }
        #expect(support.sendAll(client, count: 1).first?.outcome == 1)
        // 50 minutes later (for the client) the token is re-signed; the server, whose clock did
        // not move, sees the connection change tokens within 20 minutes.
        clock.advance(seconds: 50 * 60)
        #expect(support.send(client, count: 1, firstTag: 1).accepted == 1)
        #expect(support.passBackoff(of: client, on: clock), "the refusal set a back-off")
        let results = support.collect(client, count: 1)
        #expect(results.first?.outcome == 1, "\(results.first?.reasonText ?? "no result")")
        #expect(results.first?.attempts == 2)
        let records = server.record()
        #expect(records.map(\.reason) == ["", "TooManyProviderTokenUpdates", ""])
        #expect(Set(records.map(\.connection)).count == 2, "the resend went over a new connection")
    }
}
