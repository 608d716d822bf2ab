import PushCore
import Testing

@Suite("APNsResponse", .timeLimit(.minutes(1)))
struct APNsResponseTests {
    private func parse(_ body: String) -> APNsResponse.ErrorBody? { withBytes(body) { APNsResponse.parseErrorBody($0) } }
    private func reasonText(_ data: String) -> String { withBytes(data) { APNsResponse.reasonText(in: $0) } }

    @Test("A body with only a reason gives that reason and timestamp 0")
    func parsesReasonOnly() throws {
        let body = try #require(parse(#"{"reason":"BadDeviceToken"}"#))
        #expect(body.reason == .badDeviceToken)
        #expect(body.reasonText == "BadDeviceToken")
        #expect(body.timestampMs == 0)
    }

    @Test("A 410 body gives the reason and the timestamp in milliseconds")
    func parsesReasonAndTimestamp() throws {
        let body = try #require(parse(#"{"reason":"Unregistered","timestamp":1700000000123}"#))
        #expect(body.reason == .unregistered)
        #expect(body.reasonText == "Unregistered")
        #expect(body.timestampMs == 1_700_000_000_123)
    }

    @Test("Member order, whitespace and extra members do not matter")
    func ignoresOrderAndExtras() throws {
        let body = try #require(parse(" {\n \"timestamp\" : 42 , \"extra\": [1, {\"reason\": \"x\"}], \"reason\" : \"ExpiredToken\" } "))
        #expect(body.reason == .expiredToken)
        #expect(body.timestampMs == 42)
    }

    @Test("An escaped reason text is unescaped before lookup")
    func unescapesReason() throws {
        #expect(try #require(parse(#"{"reason":"Bad\u0054opic"}"#)).reason == .badTopic)
    }

    @Test("An unknown reason maps to .unknown and keeps its text")
    func keepsUnknownReasonText() throws {
        let body = try #require(parse(#"{"reason":"SomethingNew"}"#))
        #expect(body.reason == .unknown)
        #expect(body.reasonText == "SomethingNew")
    }

    @Test("A timestamp that is not an integer reads as 0")
    func nonIntegerTimestampIsZero() throws {
        #expect(try #require(parse(#"{"reason":"Unregistered","timestamp":"soon"}"#)).timestampMs == 0)
        #expect(try #require(parse(#"{"reason":"Unregistered","timestamp":1.5}"#)).timestampMs == 0)
    }

    @Test("Bodies that are not a JSON object with a string reason give nil", arguments: [
        "", "not json", "{}", #"{"reason":1}"#, #"{"reason":null}"#, #"{"timestamp":1}"#, #"["reason"]"#,
        #"{"reason":"BadTopic""#, #"{"reason":"BadTopic"} trailing"#, #"{"Reason":"BadTopic"}"#,
    ])
    func malformedBodiesGiveNil(body: String) {
        #expect(parse(body) == nil)
    }

    @Test("GOAWAY debug data in JSON gives its reason")
    func goawayJSONReason() {
        #expect(reasonText(#"{"reason":"Shutdown"}"#) == "Shutdown")
        #expect(reasonText(#"{"reason":"NotInTheTable"}"#) == "NotInTheTable")
    }

    @Test("GOAWAY debug data in plain text is returned as text")
    func goawayPlainText() {
        #expect(reasonText("graceful shutdown") == "graceful shutdown")
        #expect(reasonText("") == "")
    }

    @Test("Plain-text GOAWAY debug data is cut to 127 bytes")
    func goawayTextIsCut() {
        let long = String(repeating: "0123456789", count: 20)
        #expect(reasonText(long) == String(long.prefix(127)))
    }

    @Test("A JSON GOAWAY reason is cut to 127 bytes too, never inside a character")
    func goawayJSONReasonIsCut() {
        let long = String(repeating: "é", count: 100)  // 200 bytes
        let text = reasonText("{\"reason\":\"\(long)\"}")
        #expect(text == String(repeating: "é", count: 63))
        #expect(text.utf8.count == 126)
    }

    @Test("A server sending one of the library's own reason names sends an unknown reason",
          arguments: ["Timeout", "ConnectionLost", "Cancelled", "CancelledInFlight", "QueueTimeout", "ConnectFailed", "TLSFailed"])
    func libraryReasonNamesFromServerAreUnknown(name: String) throws {
        let body = try #require(parse("{\"reason\":\"\(name)\"}"))
        #expect(body.reason == .unknown)
        #expect(body.reasonText == name)
    }

    @Test("prefix(utf8Bytes:) never splits a scalar and never exceeds the limit")
    func prefixUTF8Bytes() {
        #expect("abc".prefix(utf8Bytes: 5) == "abc")
        #expect("abc".prefix(utf8Bytes: 3) == "abc")
        #expect("abc".prefix(utf8Bytes: 0) == "")
        #expect("a😀b".prefix(utf8Bytes: 4) == "a")   // the emoji is 4 bytes
        #expect("a😀b".prefix(utf8Bytes: 5) == "a😀")
        #expect("ééé".prefix(utf8Bytes: 5) == "éé")
        for limit in 0...20 {
            let cut = "x€😀ü—ok".prefix(utf8Bytes: limit)
            #expect(cut.utf8.count <= limit && "x€😀ü—ok".hasPrefix(cut))
        }
    }
}
