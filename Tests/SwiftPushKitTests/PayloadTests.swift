import Foundation
import Testing
@testable import SwiftPushKit

/// Payloads as values: the builder (every aps key, Live Activity keys, custom keys), any
/// Encodable, raw JSON. Compared as parsed JSON.
@Suite("Payloads", .timeLimit(.minutes(1)))
struct PayloadTests {
    func parsed(_ p: PushPayload) throws -> NSDictionary {
        try #require(JSONSerialization.jsonObject(with: Data(p.bytes)) as? NSDictionary)
    }

    @Test("The builder writes the aps keys it is given, custom keys beside aps")
    func builder() throws {
        var b = PushPayload.Builder()
        b.title = "Hello \"you\""
        b.body = "from swiftpush"
        b.badge = 3
        b.sound = .named("ping.caf")
        b.interruptionLevel = .timeSensitive
        b.relevanceScore = 0.5
        b.threadID = "t"
        try b.addCustom("order", ["id": 42])
        let json = try parsed(PushPayload(b))
        let aps = try #require(json["aps"] as? NSDictionary)
        #expect((aps["alert"] as? NSDictionary)?["title"] as? String == "Hello \"you\"")
        #expect(aps["badge"] as? Int == 3 && aps["sound"] as? String == "ping.caf")
        #expect(aps["interruption-level"] as? String == "time-sensitive" && aps["thread-id"] as? String == "t")
        #expect((json["order"] as? NSDictionary)?["id"] as? Int == 42)
    }

    struct Score: Codable { var home: Int; var away: Int }

    @Test("Live Activity keys: content-state from an Encodable; a start without attributes is refused")
    func liveActivity() throws {
        var b = PushPayload.Builder()
        b.event = .update
        b.timestamp = 1_700_000_000
        try b.setContentState(Score(home: 2, away: 1))
        let aps = try #require(try parsed(PushPayload(b))["aps"] as? NSDictionary)
        #expect(aps["event"] as? String == "update" && (aps["content-state"] as? NSDictionary)?["home"] as? Int == 2)
        b.event = .start
        b.title = "Kick-off"
        #expect(throws: PushError(.badPayload, "a Live Activity start needs attributes-type")) { try PushPayload(b) }
        b.attributesType = "MatchAttributes"
        try b.setAttributes(["team": "A"])
        b.inputPushToken = true
        #expect(try parsed(PushPayload(b))["aps"] != nil)
    }

    @Test("Rule breaks are PushErrors naming the key")
    func builderErrors() throws {
        var b = PushPayload.Builder()
        b.relevanceScore = 2
        #expect(throws: PushError(.badPayload, "relevance-score must be between 0 and 1, got 2.0")) { try PushPayload(b) }
        #expect(throws: PushError.self) { try b.addCustom("aps", 1) }
        #expect(throws: PushError.self) { try b.setContentState(json: Array("[1]".utf8)) }
    }

    @Test("Any Encodable is a payload; raw JSON is kept byte for byte")
    func encodableAndRaw() throws {
        struct Body: Encodable { struct APS: Encodable { var alert: String }; var aps: APS }
        let p = try PushPayload(encoding: Body(aps: .init(alert: "hi")))
        #expect(((try parsed(p))["aps"] as? NSDictionary)?["alert"] as? String == "hi")
        #expect(PushPayload(json: #"{"aps":{}}"#).bytes == Array(#"{"aps":{}}"#.utf8))
    }

    @Test("apns-ids read and write their canonical form")
    func apnsIDs() {
        let id = APNsID("123E4567-E89B-12D3-A456-426614174000")
        #expect(id?.description == "123e4567-e89b-12d3-a456-426614174000")
        #expect(APNsID("123e4567e89b12d3a456426614174000") == nil && APNsID("not a uuid") == nil)
        let r = APNsID.random()
        #expect(APNsID(r.description) == r && r.description.count == 36)
        // What results decode without checks (eight and four digits at a time), either case.
        for _ in 0..<1000 {
            let id = APNsID.random()
            for text in [id.description, id.description.uppercased()] {
                let decoded = Array(text.utf8).withUnsafeBytes { APNsID(trustedASCII: $0) }
                #expect(decoded == id, "\(text)")
            }
        }
    }
}
