import Foundation // JSONSerialization: an independent parser for the payloads read
import PushCore
import Testing

private func read(_ text: String) throws(ApnsFile.Failure) -> ApnsFile {
    try ApnsFile(contents: Array(text.utf8))
}

private func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

@Suite("ApnsFile", .timeLimit(.minutes(1)))
struct ApnsFileTests {
    @Test("The bundle id is read and its key removed; the other members are copied byte for byte, in order")
    func removesTargetBundle() throws {
        let file = try read("""
        {
          "aps" : { "alert" : { "title" : "caf\\u00e9", "body" : "Hi ☃" }, "badge" : 1.50 },
          "Simulator Target Bundle" : "com.example.app",
          "custom": [1, 2,  3]
        }
        """)
        #expect(file.bundleID == "com.example.app")
        #expect(text(file.payload) == #"{"aps":{ "alert" : { "title" : "caf\u00e9", "body" : "Hi ☃" }, "badge" : 1.50 },"custom":[1, 2,  3]}"#)
        let parsed = try JSONSerialization.jsonObject(with: Data(file.payload)) as? NSDictionary
        #expect(parsed == ["aps": ["alert": ["title": "café", "body": "Hi ☃"], "badge": 1.5], "custom": [1, 2, 3]] as NSDictionary)
    }

    @Test("The key is removed wherever it stands", arguments: [
        #"{"Simulator Target Bundle":"b","aps":{},"x":1}"#,
        #"{"aps":{},"Simulator Target Bundle":"b","x":1}"#,
        #"{"aps":{},"x":1,"Simulator Target Bundle":"b"}"#,
        #"{"aps":{},"Simulator Target Bundle":"b","x":1,"Simulator Target Bundle":"b"}"#,
    ])
    func anyPosition(doc: String) throws {
        let file = try read(doc)
        #expect(file.bundleID == "b")
        #expect(text(file.payload) == #"{"aps":{},"x":1}"#)
    }

    @Test("A file without the key is a plain payload: bytes unchanged, no bundle id")
    func withoutKey() throws {
        let doc = " {\"aps\" : {\"alert\":\"x\"}}\n"
        let file = try read(doc)
        #expect(file.bundleID == nil)
        #expect(file.payload == Array(doc.utf8))
        #expect(file.topic(for: .alert) == nil)
    }

    @Test("Keys that need escapes are written back escaped; the bundle id's escapes are decoded")
    func escapedKeys() throws {
        let file = try read(#"{"q\"uo\\te":1,"Simulator Target Bundle":"com.ex\u0061mple","caf\u00e9":2}"#)
        #expect(file.bundleID == "com.example")
        #expect(text(file.payload) == #"{"q\"uo\\te":1,"café":2}"#)
    }

    @Test("Files that are not a JSON object with a string bundle id are refused with a message")
    func refused() {
        #expect(throws: ApnsFile.Failure(.badPayload, "not a JSON object: expected a JSON object at byte 0")) { try read("[1]") }
        #expect(throws: ApnsFile.Failure(.badPayload, "not a JSON object: unexpected end of JSON in an object at byte 9")) {
            try read(#"{"aps":{}"#)
        }
        #expect(throws: ApnsFile.Failure(.badPayload, #""Simulator Target Bundle" must be a string"#)) {
            try read(#"{"aps":{},"Simulator Target Bundle":42}"#)
        }
        #expect(throws: ApnsFile.Failure(.badPayload, #""Simulator Target Bundle" is empty"#)) {
            try read(#"{"aps":{},"Simulator Target Bundle":""}"#)
        }
        #expect(throws: ApnsFile.Failure(.badPayload, #""Simulator Target Bundle" is given twice, with different values"#)) {
            try read(#"{"Simulator Target Bundle":"a","Simulator Target Bundle":"b"}"#)
        }
    }

    @Test("The topic is the bundle id plus the push type's suffix")
    func topics() throws {
        let file = try read(#"{"aps":{},"Simulator Target Bundle":"com.example.app"}"#)
        let expected: [(PushType, String)] = [
            (.alert, "com.example.app"), (.background, "com.example.app"), (.voip, "com.example.app.voip"),
            (.complication, "com.example.app.complication"), (.fileprovider, "com.example.app.pushkit.fileprovider"),
            (.liveactivity, "com.example.app.push-type.liveactivity"), (.location, "com.example.app.location-query"),
            (.pushtotalk, "com.example.app.voip-ptt"), (.widgets, "com.example.app.push-type.widgets"),
            (.controls, "com.example.app.push-type.controls"),
        ]
        #expect(expected.count == PushType.allCases.count - 1) // all but mdm
        for (type, topic) in expected {
            #expect(try file.topic(for: type)?.get() == topic)
            // Every derived topic passes the rules the client checks topics with.
            #expect(Array(topic.utf8).withUnsafeBytes { NotificationRules.checkTopic($0, pushType: type) } == nil)
        }
    }

    @Test("No topic is derived for mdm, nor from an empty or malformed bundle id")
    func topicRefusals() {
        func topic(_ bundle: String, _ type: PushType) -> NotificationRules.Violation? {
            if case .failure(let v) = Array(bundle.utf8).withUnsafeBytes({ type.topic(forBundleID: $0) }) { return v }
            return nil
        }
        #expect(topic("com.example.app", .mdm) == .init(.badTopic, "an mdm topic comes from the MDM certificate, not from a bundle id"))
        #expect(topic("", .alert) == .init(.badTopic, "bundle id is empty"))
        #expect(topic("com.example app", .voip) == .init(.badTopic, "bundle id has a space, control or non-ASCII character"))
        #expect(topic("com.exämple", .alert)?.status == .badTopic)
        #expect(topic(String(repeating: "a", count: 251), .voip)?.status == .badTopic)
    }
}
