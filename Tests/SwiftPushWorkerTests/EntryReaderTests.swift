import PushCore
@testable import SwiftPushWorker
@testable import SwiftPushWorkerMachine
@testable import SwiftPushWorkerRedis
import Testing

@Suite("EntryReader", .timeLimit(.minutes(1)))
struct EntryReaderTests {
    static let token = "00fc13adff785122b4ad28809a3420982341241421348097878e577c991de8f0"
    static let token2 = "00fc13adff785122b4ad28809a3420982341241421348097878e577c991de8f1"
    let reader = EntryReader(apps: ["demo": AppPolicy(topics: ["com.example.app", "com.example.app.voip"]),
                                    "open": AppPolicy(topics: [])])

    func entry(_ fields: [(String, String)]) -> QueueEntry { QueueEntry(entryID: "1-0", fields) }
    func base(_ extra: [(String, String)] = [], without: Set<String> = []) -> QueueEntry {
        let fields = [("id", "n-1"), ("app", "demo"), ("token", Self.token), ("payload", #"{"aps":{"alert":"hi"}}"#)]
        return entry(fields.filter { !without.contains($0.0) } + extra)
    }
    /// The rejection of a single entry's one notification, or of a whole entry.
    func rejection(_ e: QueueEntry) -> EntryRejection? {
        let w = reader.read(e)
        if let r = w.rejection { return r }
        if case .rejected(let r, _, _)? = w.notes.first { return r }
        return nil
    }
    func ready(_ e: QueueEntry) -> WorkNote? {
        if case .ready(let n)? = reader.read(e).notes.first { return n }
        return nil
    }

    @Test("A complete entry becomes a notification with the name-based apns-id; its topic defaults to the app's")
    func complete() throws {
        let w = reader.read(base([("priority", "5"), ("expiration", "0"), ("collapse_id", "c"), ("not_after", "99")]))
        #expect(w.kind == .single && w.count == 1 && w.app == "demo" && w.id == "n-1" && w.retries == 0)
        let n = try #require(ready(base([("priority", "5"), ("expiration", "0"), ("collapse_id", "c"), ("not_after", "99")])))
        #expect(n.id == "n-1" && n.pushType == .alert && n.priority == 5 && n.expiration == 0)
        #expect(n.topic == nil || n.topic == "com.example.app")
        #expect(n.collapseID == "c" && n.notAfter == 99)
        #expect(n.apnsID.description == NameBasedUUID.id(of: "n-1").description)
        #expect(w.claims.map(\.id) == ["n-1"])
    }

    @Test("Each kind of bad entry is rejected with its reason and the library's message")
    func badEntries() {
        #expect(rejection(base(without: ["id"]))?.reason == "MissingId")
        #expect(rejection(base([("id", "n-2")]))?.reason == "BadId")
        #expect(rejection(base(without: ["app"]))?.reason == "UnknownApp")
        #expect(rejection(base(without: ["app"]).withField("app", "nope"))?.detail.contains("unknown app 'nope'") == true)
        #expect(rejection(base(without: ["token"]).withField("token", "123")) == EntryRejection(.badDeviceToken, "device token has an odd number of hex digits (3)"))
        #expect(rejection(base(without: ["payload"]))?.reason == "BadPayload")
        #expect(rejection(base([("push_type", "smoke")]))?.reason == "BadPushType")
        #expect(rejection(base([("priority", "7")]))?.reason == "BadPriority")
        #expect(rejection(base([("expiration", "-1")]))?.reason == "BadExpiration")
        #expect(rejection(base([("topic", "com.other")]))?.reason == "TopicDisallowed")
        #expect(rejection(base([("v", "3")]))?.reason == "UnsupportedVersion")
        #expect(rejection(base([("v", "2")]))?.reason == "BadField")
        #expect(rejection(base([("not_after", "soon")]))?.reason == "BadField")
        #expect(rejection(base([("payload", "{}")]))?.reason == "BadField")
    }

    @Test("An app without a topic list needs the entry's topic")
    func openApp() {
        #expect(rejection(base(without: ["app"]).withField("app", "open"))?.reason == "BadTopic")
        #expect(rejection(base([("topic", "com.any")], without: ["app"]).withField("app", "open")) == nil)
    }

    @Test("A multicast entry: one notification per distinct token, each apns-id named by id and token, one claim for the entry")
    func multicast() throws {
        let e = entry([("v", "2"), ("id", "m-1"), ("app", "demo"), ("tokens", "\(Self.token),\(Self.token2),\(Self.token)"),
                       ("payload", #"{"aps":{"alert":"hi"}}"#)])
        let w = reader.read(e)
        #expect(w.kind == .multicast && w.count == 2 && w.repeats == 1 && w.rejection == nil)
        #expect(w.claims.map(\.id) == ["m-1"])
        let ids = w.notes.compactMap { slot -> String? in if case .ready(let n) = slot { return n.apnsID.description }; return nil }
        #expect(ids == [NameBasedUUID.id(of: "m-1", token: Array(Self.token.utf8)).description, NameBasedUUID.id(of: "m-1", token: Array(Self.token2.utf8)).description])
    }

    /// A multicast entry with its tokens in the packed form (`tokens_bin`).
    func packedEntry(_ packed: [UInt8], extra: [(String, String)] = []) -> QueueEntry {
        let text = [("v", "2"), ("id", "m-1"), ("app", "demo"), ("payload", #"{"aps":{"alert":"hi"}}"#)] + extra
        return QueueEntry(entryID: "1-0", fields: text.map { (Array($0.0.utf8), Array($0.1.utf8)) } + [(Array("tokens_bin".utf8), packed)])
    }

    @Test("Packed tokens (tokens_bin) read exactly as the same tokens in text: notes, token text, apns-ids, repeats")
    func packedTokens() throws {
        let tokens = [Self.token, Self.token2, Self.token, "ab"]
        let packed = try #require(PackedTokens.pack(tokens))
        #expect(packed.count == 33 + 33 + 33 + 2)
        let text = reader.read(entry([("v", "2"), ("id", "m-1"), ("app", "demo"), ("payload", #"{"aps":{"alert":"hi"}}"#),
                                      ("tokens", tokens.joined(separator: ","))]))
        let bin = reader.read(packedEntry(packed))
        #expect(bin.kind == .multicast && bin.rejection == nil && bin.count == text.count && bin.repeats == text.repeats && bin.repeats == 1)
        func described(_ w: WorkEntry) -> [String] {
            w.notes.map { slot in
                switch slot {
                case .ready(let n): return "\(w.text(n.token)) \(n.apnsID)"
                case .rejected(let r, _, let t): return "\(t.map { w.text($0) } ?? "-") \(r.reason)"
                }
            }
        }
        #expect(described(bin) == described(text))
        #expect(described(bin)[0].hasPrefix(Self.token))
    }

    @Test("Packed tokens: the producers' packing takes only lowercase hex; a field cut inside a token, or both forms, is refused whole")
    func packedTokenRefusals() throws {
        #expect(PackedTokens.pack([Self.token.uppercased()]) == nil)
        #expect(PackedTokens.pack(["abc"]) == nil && PackedTokens.pack([""]) == nil && PackedTokens.pack(["zz"]) == nil)
        var cut = try #require(PackedTokens.pack([Self.token, Self.token2]))
        cut.removeLast()
        let w = reader.read(packedEntry(cut))
        #expect(w.rejection?.reason == "BadField" && w.rejection?.detail.contains("'tokens_bin' ends inside a token") == true)
        let both = reader.read(packedEntry(try #require(PackedTokens.pack([Self.token])), extra: [("tokens", Self.token2)]))
        #expect(both.rejection?.reason == "BadField")
        // An empty token in the packed form is that token's own BadDeviceToken, as in the text form.
        let empty = reader.read(packedEntry([0] + (try #require(PackedTokens.pack([Self.token])))))
        let reasons = empty.notes.map { slot -> String in if case .rejected(let r, _, _) = slot { return r.reason }; return "ready" }
        #expect(empty.rejection == nil && reasons == ["BadDeviceToken", "ready"])
    }

    @Test("A multicast entry with a bad shared field is one rejection covering every token; a bad token is its own")
    func multicastRejections() {
        let bad = reader.read(entry([("v", "2"), ("id", "m-2"), ("app", "demo"), ("tokens", "\(Self.token),\(Self.token2)"), ("payload", "[1]")]))
        #expect(bad.rejection?.reason == "BadPayload" && bad.count == 2)
        let one = reader.read(entry([("v", "2"), ("id", "m-3"), ("app", "demo"), ("tokens", "\(Self.token),123"), ("payload", "{}")]))
        let reasons = one.notes.map { slot -> String in if case .rejected(let r, _, _) = slot { return r.reason }; return "ready" }
        #expect(one.rejection == nil && reasons == ["ready", "BadDeviceToken"])
    }

    @Test("A multicast entry over the bound is refused whole")
    func multicastBound() {
        let tokens = (0...EntryKind.maxNotifications).map { String(format: "%064x", $0 + 1) }.joined(separator: ",")
        let w = reader.read(entry([("v", "2"), ("id", "m-4"), ("app", "demo"), ("tokens", tokens), ("payload", "{}")]))
        #expect(w.rejection != nil)
    }

    @Test("An id with control characters or invalid UTF-8 is refused; a 256-byte id is taken")
    func ids() {
        #expect(EntryReader.notificationID(of: entry([("id", "a\nb")])) == nil)
        #expect(EntryReader.notificationID(of: QueueEntry(entryID: "1-0", fields: [(Array("id".utf8), [0xFF, 0xFE])])) == nil)
        #expect(EntryReader.notificationID(of: entry([("id", String(repeating: "é", count: 128))])) != nil)
        #expect(EntryReader.notificationID(of: entry([("id", String(repeating: "x", count: 257))])) == nil)
    }
}

extension QueueEntry {
    func withField(_ name: String, _ value: String) -> QueueEntry {
        QueueEntry(entryID: entryID, fields: fields + [(Array(name.utf8), Array(value.utf8))], deliveries: deliveries)
    }
}
