import Foundation // JSONSerialization: tests compare parsed JSON, never the library's own reader
import PushCore
import Testing

/// Parses a built payload with Foundation, as an independent check of what the builder wrote.
private func parse(_ bytes: [UInt8]) throws -> NSDictionary {
    let object = try JSONSerialization.jsonObject(with: Data(bytes), options: [])
    return try #require(object as? NSDictionary)
}

/// Builds and parses.
private func parsed(_ b: PayloadBuilder) throws -> NSDictionary {
    try parse(try b.build())
}

private func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

/// Runs a byte-level setter over `bytes`.
private func withRaw<R>(_ bytes: [UInt8], _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
    try bytes.withUnsafeBytes(body)
}

@Suite("PayloadBuilder", .timeLimit(.minutes(1)))
struct PayloadBuilderTests {
    // MARK: Fields

    @Test("An empty builder gives an empty aps dictionary")
    func emptyBuilder() throws {
        #expect(text(try PayloadBuilder().build()) == #"{"aps":{}}"#)
    }

    @Test("Every alert field lands in aps.alert under Apple's key")
    func alertFields() throws {
        var b = PayloadBuilder()
        b.title = "T"
        b.subtitle = "S"
        b.body = "B"
        b.launchImage = "launch.png"
        b.titleLocKey = "TITLE_FMT"
        b.titleLocArgs = ["a", "b"]
        b.subtitleLocKey = "SUB_FMT"
        b.subtitleLocArgs = ["c"]
        b.locKey = "BODY_FMT"
        b.locArgs = ["d", "e", "f"]
        let expected: NSDictionary = ["aps": ["alert": [
            "title": "T", "subtitle": "S", "body": "B", "launch-image": "launch.png",
            "title-loc-key": "TITLE_FMT", "title-loc-args": ["a", "b"],
            "subtitle-loc-key": "SUB_FMT", "subtitle-loc-args": ["c"],
            "loc-key": "BODY_FMT", "loc-args": ["d", "e", "f"],
        ]]]
        #expect(try parsed(b) == expected)
    }

    @Test("Every aps field is written with its type: strings, integers, flags and the relevance score")
    func apsFields() throws {
        var b = PayloadBuilder()
        b.body = "x"
        b.badge = 7
        b.sound = .named("chime.caf")
        b.threadID = "thread-1"
        b.category = "MESSAGE"
        b.contentAvailable = true
        b.mutableContent = true
        b.targetContentID = "window-2"
        b.interruptionLevel = .timeSensitive
        b.relevanceScore = 0.75
        b.filterCriteria = "work"
        let expected: NSDictionary = ["aps": [
            "alert": ["body": "x"], "badge": 7, "sound": "chime.caf", "thread-id": "thread-1",
            "category": "MESSAGE", "content-available": 1, "mutable-content": 1,
            "target-content-id": "window-2", "interruption-level": "time-sensitive",
            "relevance-score": 0.75, "filter-criteria": "work",
        ]]
        #expect(try parsed(b) == expected)
    }

    @Test("A critical sound is the dictionary {critical: 1, name, volume}")
    func criticalSound() throws {
        var b = PayloadBuilder()
        try b.setCriticalSound(name: "alarm.caf", volume: 0.5)
        #expect(try parsed(b) == ["aps": ["sound": ["critical": 1, "name": "alarm.caf", "volume": 0.5]]] as NSDictionary)
        #expect(text(try b.build()) == #"{"aps":{"sound":{"critical":1,"name":"alarm.caf","volume":0.5}}}"#)
    }

    @Test("Live Activity keys are written, content-state and attributes copied byte for byte")
    func liveActivity() throws {
        var b = PayloadBuilder()
        b.timestamp = 1_700_000_000
        b.event = .start
        b.contentState = try .init(#" {"score": 1.50, "team":"caf\u00e9"} "#)
        b.staleDate = 1_700_000_600
        b.dismissalDate = 1_700_003_600
        b.attributesType = "MatchAttributes"
        b.attributes = try .init(#"{"home":"A","away":"B"}"#)
        b.title = "Kick-off"
        let json = text(try b.build(for: .liveactivity))
        // Raw values keep their spelling (1.50, \u00e9, inner spaces); only the outer whitespace goes.
        #expect(json.contains(#""content-state":{"score": 1.50, "team":"caf\u00e9"},"#))
        let expected: NSDictionary = ["aps": [
            "alert": ["title": "Kick-off"], "timestamp": 1_700_000_000, "event": "start", "content-state": ["score": 1.5, "team": "café"],
            "stale-date": 1_700_000_600, "dismissal-date": 1_700_003_600,
            "attributes-type": "MatchAttributes", "attributes": ["home": "A", "away": "B"],
        ]]
        #expect(try parse(Array(json.utf8)) == expected)
    }

    @Test("Custom keys follow aps in the order they were added, with raw values kept as written")
    func customKeys() throws {
        var b = PayloadBuilder()
        b.body = "hi"
        try b.addCustom(key: "z", json: Array("1.50".utf8))
        try b.addCustom(key: "a", json: Array(#"{"nested":[1,{"x":null}]}"#.utf8))
        try b.addCustom(key: "m", value: .init("\"text\""))
        #expect(text(try b.build()) == #"{"aps":{"alert":{"body":"hi"}},"z":1.50,"a":{"nested":[1,{"x":null}]},"m":"text"}"#)
        let expected: NSDictionary = ["aps": ["alert": ["body": "hi"]], "z": 1.5, "a": ["nested": [1, ["x": NSNull()]]], "m": "text"]
        #expect(try parsed(b) == expected)
    }

    @Test("Key order is fixed: aps first, alert members and aps members in Apple's documented order")
    func deterministicOrder() throws {
        var b = PayloadBuilder()
        try b.addCustom(key: "custom", json: Array("true".utf8))
        b.filterCriteria = "f"
        b.relevanceScore = 1
        b.badge = 0
        b.body = "b"
        b.title = "t"
        b.sound = .named("default")
        #expect(text(try b.build())
            == #"{"aps":{"alert":{"title":"t","body":"b"},"badge":0,"sound":"default","relevance-score":1.0,"filter-criteria":"f"},"custom":true}"#)
        #expect(try b.build() == (try b.build()))
    }

    @Test("The field setters reach the same properties as direct assignment")
    func fieldSetters() throws {
        var b = PayloadBuilder()
        for field in PayloadBuilder.TextField.allCases where field != .interruptionLevel && field != .event && field != .inputPushChannel {
            try withRaw(Array(field.key.utf8)) { try b.set(field, utf8: $0) }
        }
        try b.set(.interruptionLevel, "critical")
        // A start, so that input-push-token and input-push-channel (start only) may be set too.
        try b.set(.event, "start")
        try withRaw(Array("dHN0LXNyY2gtY2hubA==".utf8)) { try b.set(.inputPushChannel, utf8: $0) }
        try withRaw(Array("x".utf8)) { try b.appendLocArg(.title, utf8: $0) }
        b.appendLocArg(.subtitle, "y")
        b.appendLocArg(.body, "z")
        for field in PayloadBuilder.IntegerField.allCases { try b.set(field, 1) }
        try b.setRelevanceScore(0.25)
        try withRaw(Array(#"{"a":1}"#.utf8)) { try b.set(.contentState, json: $0) }
        try withRaw(Array(#"{"b":2}"#.utf8)) { try b.set(.attributes, json: $0) }
        let expected: NSDictionary = ["aps": [
            "alert": ["title": "title", "subtitle": "subtitle", "body": "body", "launch-image": "launch-image",
                      "title-loc-key": "title-loc-key", "title-loc-args": ["x"],
                      "subtitle-loc-key": "subtitle-loc-key", "subtitle-loc-args": ["y"],
                      "loc-key": "loc-key", "loc-args": ["z"]],
            "badge": 1, "sound": "sound", "thread-id": "thread-id", "category": "category",
            "content-available": 1, "mutable-content": 1, "target-content-id": "target-content-id",
            "interruption-level": "critical", "relevance-score": 0.25, "filter-criteria": "filter-criteria",
            "timestamp": 1, "event": "start", "content-state": ["a": 1], "stale-date": 1, "dismissal-date": 1,
            "attributes-type": "attributes-type", "attributes": ["b": 2],
            "input-push-token": 1, "input-push-channel": "dHN0LXNyY2gtY2hubA==",
        ]]
        #expect(try parsed(b) == expected)

        // nil removes, 0 turns the flags off.
        for field in PayloadBuilder.TextField.allCases { try b.set(field, nil) }
        for field in PayloadBuilder.IntegerField.allCases { try b.set(field, nil) }
        try b.set(.contentAvailable, 0)
        try b.setRelevanceScore(nil)
        try b.set(.contentState, json: nil)
        try b.set(.attributes, json: nil)
        b.titleLocArgs = []
        b.subtitleLocArgs = []
        b.locArgs = []
        #expect(text(try b.build()) == #"{"aps":{}}"#)
    }

    @Test("Every interruption level and Live Activity event is accepted by name; others are refused")
    func enumeratedValues() throws {
        var b = PayloadBuilder()
        for level in ["passive", "active", "time-sensitive", "critical"] {
            try b.set(.interruptionLevel, level)
            #expect(try parsed(b) == ["aps": ["interruption-level": level]] as NSDictionary)
        }
        b.interruptionLevel = nil
        for event in ["update", "end"] {
            try b.set(.event, event)
            #expect(try parsed(b) == ["aps": ["event": event]] as NSDictionary)
        }
        try b.set(.event, "start")
        #expect(b.event == .start, "a start is built only with its attributes (see liveActivityStart)")
        let before = b
        #expect(throws: PayloadBuilder.Failure(.badPayload,
            #"interruption-level must be passive, active, time-sensitive or critical, got "urgent""#)) {
            try b.set(.interruptionLevel, "urgent")
        }
        #expect(throws: PayloadBuilder.Failure(.badPayload, #"event must be start, update or end, got "Start""#)) {
            try b.set(.event, "Start")
        }
        #expect(b == before)
    }

    // MARK: Escaping

    @Test("Non-ASCII text and emoji are written as UTF-8, unescaped, and parse back unchanged")
    func nonASCII() throws {
        let samples = ["café", "日本語のテキスト", "Привет", "مرحبا", "👍🏽 🇫🇷 👨‍👩‍👧", "\u{10FFFF}", "e\u{301}"]
        for s in samples {
            var b = PayloadBuilder()
            b.body = s
            try b.addCustom(key: s, json: Array("1".utf8))
            let bytes = try b.build()
            #expect(text(bytes) == #"{"aps":{"alert":{"body":""# + s + #""}},""# + s + #"":1}"#)
            #expect(try parse(bytes) == ["aps": ["alert": ["body": s]], s: 1] as NSDictionary)
        }
    }

    @Test("Quotes, backslashes and control characters are escaped; the short forms where JSON has them")
    func escapes() throws {
        var b = PayloadBuilder()
        b.body = "say \"hi\" \\ / \n\r\t\u{8}\u{C} \u{0}\u{1}\u{1F}\u{7F}"
        let bytes = try b.build()
        #expect(text(bytes) == #"{"aps":{"alert":{"body":"say \"hi\" \\ / \n\r\t\b\f \u0000\u0001\u001f"# + "\u{7F}" + #""}}}"#)
        #expect(try parse(bytes) == ["aps": ["alert": ["body": b.body!]]] as NSDictionary)
    }

    @Test("Every control character below U+0020 is escaped and parses back to itself")
    func allControlCharacters() throws {
        var b = PayloadBuilder()
        let all = String((0..<32).map { Character(Unicode.Scalar(UInt8($0))) })
        b.title = all
        let bytes = try b.build()
        #expect(!bytes.contains { $0 < 0x20 })
        #expect(try parse(bytes) == ["aps": ["alert": ["title": all]]] as NSDictionary)
    }

    @Test("U+2028 and U+2029 are escaped (JavaScript line terminators), other U+20xx are not")
    func lineSeparators() throws {
        var b = PayloadBuilder()
        b.body = "a\u{2028}b\u{2029}c\u{2027}d\u{202A}"
        let bytes = try b.build()
        #expect(text(bytes) == #"{"aps":{"alert":{"body":"a\u2028b\u2029c"# + "\u{2027}d\u{202A}" + #""}}}"#)
        #expect(try parse(bytes) == ["aps": ["alert": ["body": b.body!]]] as NSDictionary)
    }

    @Test("Keys of custom members and loc-args are escaped like values")
    func escapedKeysAndArrays() throws {
        var b = PayloadBuilder()
        b.locKey = "K"
        b.locArgs = ["\"q\"", "line\nbreak", "ü"]
        try b.addCustom(key: "we\"ird\\key\n", json: Array("null".utf8))
        let expected: NSDictionary = ["aps": ["alert": ["loc-key": "K", "loc-args": ["\"q\"", "line\nbreak", "ü"]]],
                                      "we\"ird\\key\n": NSNull()]
        #expect(try parsed(b) == expected)
    }

    @Test("Random Unicode text round-trips through the builder and Foundation's parser", arguments: 0..<20)
    func randomText(seed: Int) throws {
        var g = SystemRandomNumberGenerator()
        func scalar() -> Unicode.Scalar {
            while true {
                let ranges: [ClosedRange<UInt32>] = [0...0x7F, 0x80...0x7FF, 0x800...0xFFFF, 0x10000...0x10FFFF, 0x2020...0x202F]
                let r = ranges[Int.random(in: 0..<ranges.count, using: &g)]
                if let s = Unicode.Scalar(UInt32.random(in: r, using: &g)) { return s }
            }
        }
        let s = String(String.UnicodeScalarView((0..<Int.random(in: 0...64, using: &g)).map { _ in scalar() }))
        var b = PayloadBuilder()
        b.body = s
        b.threadID = s
        let bytes = try b.build(limit: .max)
        #expect(bytes.withUnsafeBytes { JSON.validate($0) } == nil)
        let aps = try #require(try parse(bytes)["aps"] as? NSDictionary)
        // Compare scalars: NSString equality would treat canonically equivalent forms as equal.
        #expect(Array(((aps["alert"] as? NSDictionary)?["body"] as? String ?? "").unicodeScalars) == Array(s.unicodeScalars))
        #expect(Array((aps["thread-id"] as? String ?? "").unicodeScalars) == Array(s.unicodeScalars))
    }

    // MARK: Validation

    @Test("Invalid UTF-8 given as bytes is refused with the field's name and the offset; the builder is unchanged")
    func invalidUTF8() throws {
        var b = PayloadBuilder()
        b.title = "kept"
        let cases: [[UInt8]] = [[0x61, 0xFF], [0xC0, 0x80], [0xED, 0xA0, 0x80], [0x61, 0x62, 0xE2, 0x82], [0xF4, 0x90, 0x80, 0x80]]
        for bad in cases {
            #expect(throws: PayloadBuilder.Failure.self) { try withRaw(bad) { try b.set(.title, utf8: $0) } }
        }
        #expect(throws: PayloadBuilder.Failure(.badPayload, "title is not valid UTF-8 (byte 1)")) {
            try withRaw([0x61, 0xFF]) { try b.set(.title, utf8: $0) }
        }
        #expect(throws: PayloadBuilder.Failure(.badPayload, "loc-args is not valid UTF-8 (byte 2)")) {
            try withRaw([0x61, 0x62, 0xE2, 0x82]) { try b.appendLocArg(.body, utf8: $0) }
        }
        #expect(throws: PayloadBuilder.Failure(.badPayload, "custom key is not valid UTF-8 (byte 0)")) {
            try withRaw([0xFE]) { k in try withRaw(Array("1".utf8)) { try b.addCustom(keyUTF8: k, json: $0) } }
        }
        #expect(b.title == "kept" && b.locArgs.isEmpty && b.customKeys.isEmpty)
    }

    @Test("relevance-score and the critical sound volume must lie in 0...1")
    func unitRanges() throws {
        var b = PayloadBuilder()
        for ok in [0.0, 0.5, 1.0] {
            try b.setRelevanceScore(ok)
            try b.setCriticalSound(name: "a", volume: ok)
            _ = try b.build()
        }
        for bad in [-0.01, 1.01, .nan, .infinity] {
            #expect(throws: PayloadBuilder.Failure.self) { try b.setRelevanceScore(bad) }
            #expect(throws: PayloadBuilder.Failure.self) { try b.setCriticalSound(name: "a", volume: bad) }
        }
        // Set directly, the properties are checked when building.
        b.relevanceScore = 2
        #expect(throws: PayloadBuilder.Failure(.badPayload, "relevance-score must be between 0 and 1, got 2.0")) { try b.build() }
        b.relevanceScore = nil
        b.sound = .critical(name: "a", volume: -1)
        #expect(throws: PayloadBuilder.Failure(.badPayload, "sound volume must be between 0 and 1, got -1.0")) { try b.build() }
    }

    @Test("Badge and dates must not be negative; the flags take 0 or 1")
    func integerRanges() throws {
        var b = PayloadBuilder()
        for field in [PayloadBuilder.IntegerField.badge, .timestamp, .staleDate, .dismissalDate] {
            #expect(throws: PayloadBuilder.Failure(.badPayload, "\(field.key) must be 0 or more, got -1")) { try b.set(field, -1) }
        }
        #expect(throws: PayloadBuilder.Failure(.badPayload, "content-available must be 0 or 1, got 2")) { try b.set(.contentAvailable, 2) }
        #expect(throws: PayloadBuilder.Failure(.badPayload, "mutable-content must be 0 or 1, got 5")) { try b.set(.mutableContent, 5) }
        #expect(throws: PayloadBuilder.Failure.self) { try b.set(.badge, Int64(Int32.max) + 1) }
        b.badge = -3
        #expect(throws: PayloadBuilder.Failure(.badPayload, "badge must be 0 or more, got -3")) { try b.build() }
    }

    @Test("Raw JSON is checked: malformed values are refused with the byte offset, content-state and attributes must be objects")
    func rawJSON() throws {
        #expect(throws: PayloadBuilder.Failure(.badPayload, "not valid JSON: expected ',' or '}' in an object at byte 7")) {
            try PayloadBuilder.RawJSON(#"{"a":1 "b":2}"#)
        }
        #expect(throws: PayloadBuilder.Failure(.badPayload, "empty JSON value")) { try PayloadBuilder.RawJSON("  ") }
        #expect(throws: PayloadBuilder.Failure.self) { try PayloadBuilder.RawJSON("[1,]") }
        #expect(throws: PayloadBuilder.Failure.self) { try PayloadBuilder.RawJSON([0x22, 0xFF, 0x22]) }
        var b = PayloadBuilder()
        #expect(throws: PayloadBuilder.Failure(.badPayload, "content-state must be a JSON object")) {
            try withRaw(Array("[1]".utf8)) { try b.set(.contentState, json: $0) }
        }
        #expect(throws: PayloadBuilder.Failure(.badPayload, "attributes: not valid JSON: unexpected end of JSON in an object at byte 6")) {
            try withRaw(Array(#"{"a":1"#.utf8)) { try b.set(.attributes, json: $0) }
        }
        b.attributes = try .init("42")
        #expect(throws: PayloadBuilder.Failure(.badPayload, "attributes must be a JSON object")) { try b.build() }
    }

    @Test("Custom keys: aps is refused, a key cannot be added twice, values must be JSON")
    func customKeyRules() throws {
        var b = PayloadBuilder()
        #expect(throws: PayloadBuilder.Failure(.badPayload, #"custom key "aps" is not allowed: aps is built from the fields"#)) {
            try b.addCustom(key: "aps", json: Array("{}".utf8))
        }
        try b.addCustom(key: "k", json: Array("1".utf8))
        #expect(throws: PayloadBuilder.Failure(.badPayload, #"custom key "k" is already set"#)) {
            try b.addCustom(key: "k", json: Array("2".utf8))
        }
        #expect(throws: PayloadBuilder.Failure(.badPayload, #"custom key "v": not valid JSON: invalid literal at byte 0"#)) {
            try b.addCustom(key: "v", json: Array("nope".utf8))
        }
        #expect(text(try b.build()) == #"{"aps":{},"k":1}"#)
        b.removeCustomKeys()
        #expect(text(try b.build()) == #"{"aps":{}}"#)
    }

    @Test("Localization arguments without their format key are refused at build")
    func locArgsNeedKeys() throws {
        var b = PayloadBuilder()
        b.appendLocArg(.title, "x")
        #expect(throws: PayloadBuilder.Failure(.badPayload, "title-loc-args given without title-loc-key")) { try b.build() }
        b.titleLocKey = "T"
        b.appendLocArg(.subtitle, "y")
        #expect(throws: PayloadBuilder.Failure(.badPayload, "subtitle-loc-args given without subtitle-loc-key")) { try b.build() }
        b.subtitleLocKey = "S"
        b.appendLocArg(.body, "z")
        #expect(throws: PayloadBuilder.Failure(.badPayload, "loc-args given without loc-key")) { try b.build() }
        b.locKey = "L"
        _ = try b.build()
    }

    // MARK: Size limits

    /// A builder whose payload is exactly `size` bytes, padded with `pad` in the body.
    private func builder(ofSize size: Int, pad: Character = "x") throws -> PayloadBuilder {
        var b = PayloadBuilder()
        b.body = ""
        let overhead = try b.build().count
        let padBytes = String(pad).utf8.count
        #expect((size - overhead) % padBytes == 0)
        b.body = String(repeating: pad, count: (size - overhead) / padBytes)
        return b
    }

    @Test("An alert payload of exactly 4096 bytes is built; 4097 bytes is refused as too large")
    func alertLimit() throws {
        #expect(try builder(ofSize: 4096).build().count == 4096)
        #expect(try builder(ofSize: 4096).build(for: .alert).count == 4096)
        #expect(throws: PayloadBuilder.Failure(.payloadTooLarge, "payload is 4097 bytes; push type alert allows 4096")) {
            try builder(ofSize: 4097).build(for: .alert)
        }
        #expect(throws: PayloadBuilder.Failure(.payloadTooLarge, "payload is 4097 bytes; the limit is 4096")) {
            try builder(ofSize: 4097).build()
        }
    }

    @Test("voip payloads may be 5120 bytes; other limits are honoured by build(limit:)")
    func voipAndCustomLimits() throws {
        #expect(try builder(ofSize: 5120).build(for: .voip).count == 5120)
        #expect(throws: PayloadBuilder.Failure(.payloadTooLarge, "payload is 5121 bytes; push type voip allows 5120")) {
            try builder(ofSize: 5121).build(for: .voip)
        }
        #expect(throws: PayloadBuilder.Failure.self) { try builder(ofSize: 4500).build(for: .liveactivity) }
        #expect(try builder(ofSize: 100).build(limit: 100).count == 100)
        #expect(throws: PayloadBuilder.Failure.self) { try builder(ofSize: 101).build(limit: 100) }
    }

    @Test("The limit counts bytes: escapes and multi-byte characters count as what they take on the wire")
    func limitCountsBytes() throws {
        let overhead = #"{"aps":{"alert":{"body":""}}}"#.utf8.count // 29
        var b = PayloadBuilder()
        b.body = String(repeating: "€", count: (4096 - overhead) / 3) // 1355 three-byte characters
        #expect(try b.build().count == overhead + 3 * 1355)
        b.body! += "€"
        #expect(throws: PayloadBuilder.Failure(.payloadTooLarge, "payload is 4097 bytes; the limit is 4096")) { try b.build() }
        b.body = String(repeating: "\n", count: 2040) // each escape takes 2 bytes
        #expect(throws: PayloadBuilder.Failure(.payloadTooLarge, "payload is \(overhead + 4080) bytes; the limit is 4096")) { try b.build() }
        b.body = String(repeating: "\u{1}", count: 680) // \u0001 takes 6 bytes
        #expect(throws: PayloadBuilder.Failure(.payloadTooLarge, "payload is \(overhead + 4080) bytes; the limit is 4096")) { try b.build() }
    }

    @Test("A Live Activity start needs attributes-type, attributes and an alert; input-push-* only on a start")
    func liveActivityStart() throws {
        var b = PayloadBuilder()
        try b.set(.event, "start")
        #expect(throws: PayloadBuilder.Failure(.badPayload, "a Live Activity start needs attributes-type")) { try b.build(for: .liveactivity) }
        b.attributesType = "MatchAttributes"
        #expect(throws: PayloadBuilder.Failure(.badPayload, "a Live Activity start needs attributes")) { try b.build(for: .liveactivity) }
        b.attributes = try .init(#"{"home":"A"}"#)
        #expect(throws: PayloadBuilder.Failure(.badPayload, "a Live Activity start needs an alert (title or body)")) {
            try b.build(for: .liveactivity)
        }
        b.body = "Kick-off"
        try b.set(.inputPushToken, 1)
        try b.set(.inputPushChannel, "dHN0LXNyY2gtY2hubA==")
        #expect(text(try b.build(for: .liveactivity)).hasSuffix(#""input-push-token":1,"input-push-channel":"dHN0LXNyY2gtY2hubA=="}}"#))
        #expect(throws: PayloadBuilder.Failure(.badPayload, "input-push-token must be 0 or 1, got 2")) { try b.set(.inputPushToken, 2) }
        let before = b
        #expect(throws: PayloadBuilder.Failure.self) { try b.set(.inputPushChannel, "not a channel") }
        #expect(b == before, "a refused value leaves the payload unchanged")
        try b.set(.event, "update")
        #expect(throws: PayloadBuilder.Failure(.badPayload, "input-push-token belongs to a Live Activity start (event start) only")) {
            try b.build(for: .liveactivity)
        }
        try b.set(.inputPushToken, 0)
        #expect(throws: PayloadBuilder.Failure(.badPayload, "input-push-channel belongs to a Live Activity start (event start) only")) {
            try b.build(for: .liveactivity)
        }
        try b.set(.inputPushChannel, nil)
        #expect(!text(try b.build(for: .liveactivity)).contains("input-push"))
        b.event = nil
        b.inputPushChannel = "%%%%"
        #expect(throws: PayloadBuilder.Failure.self) { try b.build() }
    }
}
