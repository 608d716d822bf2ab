import PushCore
import SwiftPushWorker
import Testing

@Suite("EntryParser")
struct EntryParserTests {
    static let token = "00fc13adff785122b4ad28809a3420982341241421348097878e577c991de8f0"
    let parser = EntryParser(apps: ["demo": AppPolicy(topics: ["com.example.app", "com.example.app.voip"]),
                                    "open": AppPolicy(topics: [])])

    func entry(_ fields: [(String, String)]) -> QueueEntry { QueueEntry(entryID: "1-0", fields) }
    func base(_ extra: [(String, String)] = [], without: Set<String> = []) -> QueueEntry {
        let fields = [("id", "n-1"), ("app", "demo"), ("token", Self.token), ("payload", #"{"aps":{"alert":"hi"}}"#)]
        return entry(fields.filter { !without.contains($0.0) } + extra)
    }
    func rejection(_ e: QueueEntry) -> EntryRejection? {
        if case .failure(let r) = parser.parse(e) { return r }
        return nil
    }

    @Test("A complete entry becomes a notification with the app's default topic and the name-based apns-id")
    func complete() throws {
        let n = try parser.parse(base([("priority", "5"), ("expiration", "0"), ("collapse_id", "c"), ("not_after", "99")])).get()
        #expect(n.id == "n-1" && n.app == "demo" && n.pushType == .alert && n.priority == 5 && n.expiration == 0)
        #expect(String(decoding: n.topic, as: UTF8.self) == "com.example.app")
        #expect(n.collapseID.map(Array.init) == Array("c".utf8) && n.notAfter == 99 && n.retries == 0)
        #expect(n.apnsID == NameBasedUUID.make(name: Array("n-1".utf8)))
    }

    @Test("Each kind of bad entry is rejected with its reason and the library's message")
    func badEntries() {
        #expect(rejection(base(without: ["id"]))?.reason == "MissingId")
        #expect(rejection(base([("id", "n-2")]))?.reason == "BadId")
        #expect(rejection(base(without: ["app"]))?.reason == "UnknownApp")
        #expect(rejection(base(without: ["app"]) .withField("app", "nope"))?.detail.contains("unknown app 'nope'") == true)
        #expect(rejection(base(without: ["token"]).withField("token", "123")) == EntryRejection("BadDeviceToken", "device token has an odd number of hex digits (3)"))
        #expect(rejection(base(without: ["payload"]).withField("payload", "[1]")) == EntryRejection("BadPayload", "payload must be a JSON object"))
        #expect(rejection(base(without: ["payload"]).withField("payload", #"{"a":"#))?.reason == "BadPayload")
        #expect(rejection(base(without: ["payload"]))?.reason == "BadPayload")
        #expect(rejection(base([("push_type", "smoke")]))?.reason == "BadPushType")
        #expect(rejection(base([("priority", "7")]))?.reason == "BadPriority")
        #expect(rejection(base([("expiration", "-1")]))?.reason == "BadExpiration")
        #expect(rejection(base([("topic", "com.other")]))?.reason == "TopicDisallowed")
        #expect(rejection(base([("v", "2")]))?.reason == "UnsupportedVersion")
        #expect(rejection(base([("not_after", "soon")]))?.reason == "BadField")
        #expect(rejection(base([("payload", "{}")]))?.reason == "BadField")
        let big = #"{"aps":{"alert":""# + String(repeating: "x", count: 4100) + #""}}"#
        #expect(rejection(base(without: ["payload"]).withField("payload", big))?.reason == "PayloadTooLarge")
    }

    @Test("The push type's rules apply: voip needs the .voip topic, background priority 5")
    func pushTypeRules() {
        #expect(rejection(base([("push_type", "voip")]))?.reason == "BadTopic")
        if case .failure = parser.parse(base([("push_type", "voip"), ("topic", "com.example.app.voip")])) { Issue.record("voip refused") }
        #expect(rejection(base([("push_type", "background"), ("priority", "10")]))?.reason == "BadPriority")
    }

    @Test("An app without a topic list needs the entry's topic")
    func openApp() {
        #expect(rejection(base(without: ["app"]).withField("app", "open"))?.reason == "BadTopic")
        if case .failure(let r) = parser.parse(base([("topic", "com.any")], without: ["app"]).withField("app", "open")) {
            Issue.record("refused: \(r)")
        }
    }

    @Test("An id with control characters or invalid UTF-8 is refused; a 256-byte id is taken")
    func ids() {
        #expect(EntryParser.notificationID(of: entry([("id", "a\nb")])) == nil)
        #expect(EntryParser.notificationID(of: QueueEntry(entryID: "1-0", fields: [(Array("id".utf8), [0xFF, 0xFE])])) == nil)
        #expect(EntryParser.notificationID(of: entry([("id", String(repeating: "é", count: 128))])) != nil)
        #expect(EntryParser.notificationID(of: entry([("id", String(repeating: "x", count: 257))])) == nil)
    }
}

extension QueueEntry {
    func withField(_ name: String, _ value: String) -> QueueEntry {
        QueueEntry(entryID: entryID, fields: fields + [(Array(name.utf8), Array(value.utf8))], deliveries: deliveries)
    }
}
