import PushCore
import Testing

@Suite("NotificationRules", .timeLimit(.minutes(1)))
struct NotificationRulesTests {
    private func deviceToken(_ s: String) -> NotificationRules.Violation? { withBytes(s) { NotificationRules.checkDeviceToken($0) } }
    private func topic(_ s: String, _ type: PushType) -> NotificationRules.Violation? { withBytes(s) { NotificationRules.checkTopic($0, pushType: type) } }
    private func payload(_ s: String, _ type: PushType) -> NotificationRules.Violation? { withBytes(s) { NotificationRules.checkPayload($0, pushType: type) } }
    private func collapseId(_ s: String) -> NotificationRules.Violation? { withBytes(s) { NotificationRules.checkCollapseId($0) } }
    private func apnsId(_ s: String) -> NotificationRules.Violation? { withBytes(s) { NotificationRules.checkApnsId($0) } }

    /// A JSON object of exactly `size` bytes: `{"a":"xxx…"}`.
    private func object(ofSize size: Int) -> String {
        precondition(size >= 8)
        let doc = #"{"a":""# + String(repeating: "x", count: size - 8) + #""}"#
        precondition(doc.utf8.count == size)
        return doc
    }

    // MARK: Device token

    @Test("A 64-digit hex device token in either case is accepted")
    func acceptsTypicalDeviceToken() {
        #expect(deviceToken(String(repeating: "a1", count: 32)) == nil)
        #expect(deviceToken(String(repeating: "F0", count: 32)) == nil)
    }

    @Test("Device tokens of any even length up to the bound are accepted", arguments: [2, 8, 64, 160, 200, NotificationRules.maxDeviceTokenHexDigits])
    func acceptsAnyEvenLength(digits: Int) {
        #expect(deviceToken(String(repeating: "0f", count: digits / 2)) == nil)
    }

    @Test("Empty, odd-length, non-hex and overlong device tokens are bad device tokens", arguments: [
        "", "abc", String(repeating: "a", count: 63), "zz" + String(repeating: "00", count: 31),
        String(repeating: "00", count: 31) + "0g", "00 0", "00-0",
        String(repeating: "00", count: NotificationRules.maxDeviceTokenHexDigits / 2 + 1),
    ])
    func rejectsBadDeviceTokens(token: String) throws {
        let v = try #require(deviceToken(token))
        #expect(v.status == .badDeviceToken)
        #expect(!v.message.isEmpty)
    }

    @Test("A non-hex device token names the offset of the first bad character")
    func namesBadCharacterOffset() throws {
        let v = try #require(deviceToken("0011x2"))
        #expect(v.message.contains("offset 4"))
    }

    // MARK: Topic

    @Test("A missing topic is a bad topic for every push type", arguments: PushType.allCases)
    func rejectsMissingTopic(type: PushType) throws {
        #expect(try #require(topic("", type)).status == .badTopic)
    }

    @Test("A topic ending in the push type's required suffix is accepted", arguments: PushType.allCases)
    func acceptsTopicWithSuffix(type: PushType) {
        #expect(topic("com.example.app" + type.topicSuffix, type) == nil)
    }

    @Test("A topic without the push type's required suffix is a bad topic", arguments: PushType.allCases.filter { !$0.topicSuffix.isEmpty })
    func rejectsTopicWithoutSuffix(type: PushType) throws {
        let v = try #require(topic("com.example.app", type))
        #expect(v.status == .badTopic)
        #expect(v.message.contains(type.topicSuffix))
    }

    @Test("A topic that is only the suffix, with no bundle id before it, is a bad topic", arguments: PushType.allCases.filter { !$0.topicSuffix.isEmpty })
    func rejectsBareSuffix(type: PushType) throws {
        #expect(try #require(topic(type.topicSuffix, type)).status == .badTopic)
    }

    @Test("mdm, alert and background notifications take any topic", arguments: [PushType.mdm, .alert, .background])
    func anyTopicForTypesWithoutSuffix(type: PushType) {
        #expect(type.topicSuffix.isEmpty)
        #expect(topic("com.example.app", type) == nil)
        #expect(topic("com.apple.mgmt.External.0f6c1c0e-3b27-4a8e-9bd9-3f7e4f0f2a11", type) == nil)
        #expect(topic("com.example.app.voip", type) == nil)
    }

    @Test("Topics with spaces, control or non-ASCII characters are bad topics", arguments: [
        "com.example app", "com.example.app\n", "com.ex\u{e9}mple.app", "com.example.app\u{7f}", "\tcom.example",
    ])
    func rejectsUnprintableTopics(t: String) throws {
        #expect(try #require(topic(t, .alert)).status == .badTopic)
    }

    @Test("A topic may be maxTopicBytes long but not one byte longer")
    func boundsTopicLength() throws {
        let max = NotificationRules.maxTopicBytes
        #expect(topic(String(repeating: "a", count: max), .alert) == nil)
        #expect(try #require(topic(String(repeating: "a", count: max + 1), .alert)).status == .badTopic)
    }

    // MARK: Priority

    @Test("Priority 0 resolves to the push type's default: 5 for background, 10 otherwise", arguments: PushType.allCases)
    func zeroMeansDefault(type: PushType) throws {
        let p = try NotificationRules.resolvePriority(0, pushType: type).get()
        #expect(p == type.defaultPriority)
        #expect(p == (type == .background ? 5 : 10))
    }

    @Test("Priorities 10, 5 and 1 are kept for alert notifications", arguments: [Int32(10), 5, 1])
    func keepsValidPriorities(p: Int32) throws {
        #expect(try NotificationRules.resolvePriority(p, pushType: .alert).get() == p)
    }

    @Test("Background notifications accept priority 5 only", arguments: [Int32(10), 1])
    func backgroundMustUseFive(p: Int32) throws {
        #expect(try NotificationRules.resolvePriority(5, pushType: .background).get() == 5)
        guard case .failure(let v) = NotificationRules.resolvePriority(p, pushType: .background) else {
            Issue.record("background accepted priority \(p)")
            return
        }
        #expect(v.status == .badPriority)
    }

    @Test("Priorities other than 10, 5, 1 and 0 are bad priorities", arguments: [Int32(-1), 2, 3, 4, 6, 7, 9, 11, 100, .max, .min])
    func rejectsInvalidPriorities(p: Int32) {
        guard case .failure(let v) = NotificationRules.resolvePriority(p, pushType: .alert) else {
            Issue.record("priority \(p) accepted")
            return
        }
        #expect(v.status == .badPriority)
    }

    // MARK: Payload

    @Test("A small JSON object payload is accepted, with or without surrounding whitespace")
    func acceptsObjectPayload() {
        #expect(payload(#"{"aps":{"alert":"hello"}}"#, .alert) == nil)
        #expect(payload(" \n{\"aps\":{}}\r\n\t", .alert) == nil)
    }

    @Test("An empty payload is a bad payload")
    func rejectsEmptyPayload() throws {
        #expect(try #require(payload("", .alert)).status == .badPayload)
    }

    @Test("A payload that is not a JSON object is a bad payload", arguments: ["[1]", "\"aps\"", "42", "null", "   ", "x"])
    func rejectsNonObjects(p: String) throws {
        #expect(try #require(payload(p, .alert)).status == .badPayload)
    }

    @Test("An invalid JSON object payload is a bad payload whose message gives the byte offset")
    func rejectsInvalidJSON() throws {
        let v = try #require(payload(#"{"a":}"#, .alert))
        #expect(v.status == .badPayload)
        #expect(v.message.contains("byte 5"))
        #expect(try #require(payload(#"{"a":1} {}"#, .alert)).status == .badPayload)
        #expect(try #require(withBytes([0x7B, 0x22, 0xC0, 0x80, 0x22, 0x3A, 0x31, 0x7D]) { NotificationRules.checkPayload($0, pushType: .alert) }).status == .badPayload)
    }

    @Test("An alert payload of exactly 4096 bytes is accepted and 4097 bytes is too large")
    func alertPayloadLimit() throws {
        #expect(payload(object(ofSize: 4096), .alert) == nil)
        #expect(try #require(payload(object(ofSize: 4097), .alert)).status == .payloadTooLarge)
    }

    @Test("A voip payload of exactly 5120 bytes is accepted and 5121 bytes is too large")
    func voipPayloadLimit() throws {
        #expect(payload(object(ofSize: 5120), .voip) == nil)
        #expect(try #require(payload(object(ofSize: 5121), .voip)).status == .payloadTooLarge)
    }

    @Test("Every push type accepts a payload at its limit and refuses one byte more", arguments: PushType.allCases)
    func everyTypeHonoursItsLimit(type: PushType) throws {
        #expect(payload(object(ofSize: type.payloadLimit), type) == nil)
        #expect(try #require(payload(object(ofSize: type.payloadLimit + 1), type)).status == .payloadTooLarge)
    }

    @Test("An oversized payload is reported as too large even when it is not JSON")
    func sizeIsCheckedFirst() throws {
        #expect(try #require(payload(String(repeating: "x", count: 5000), .alert)).status == .payloadTooLarge)
    }

    // MARK: Collapse id

    @Test("A collapse id may be 64 bytes but not 65")
    func collapseIdLimit() throws {
        #expect(collapseId("") == nil)
        #expect(collapseId(String(repeating: "c", count: 64)) == nil)
        #expect(try #require(collapseId(String(repeating: "c", count: 65))).status == .badCollapseId)
    }

    @Test("The collapse id limit counts UTF-8 bytes, not characters")
    func collapseIdCountsBytes() throws {
        #expect(collapseId(String(repeating: "\u{e9}", count: 32)) == nil)
        #expect(try #require(collapseId(String(repeating: "\u{e9}", count: 33))).status == .badCollapseId)
    }

    // MARK: apns-id

    @Test("A canonical UUID is a valid apns-id in either case")
    func acceptsCanonicalUUID() {
        #expect(apnsId("123e4567-e89b-42d3-a456-426614174000") == nil)
        #expect(apnsId("123E4567-E89B-42D3-A456-426614174000") == nil)
    }

    @Test("Malformed UUIDs are bad apns-ids", arguments: [
        "", "123e4567-e89b-42d3-a456-42661417400", "123e4567-e89b-42d3-a456-4266141740000",
        "123e4567e89b42d3a456426614174000", "123e4567-e89b-42d3-a456_426614174000",
        "123e456-7e89b-42d3-a456-426614174000", "123g4567-e89b-42d3-a456-426614174000",
        "{23e4567-e89b-42d3-a456-42661417400}",
    ])
    func rejectsMalformedUUIDs(id: String) throws {
        #expect(try #require(apnsId(id)).status == .badApnsId)
    }

    @Test("Every byte at every offset of an apns-id is judged as the UUID grammar says")
    func apnsIdEveryByteAtEveryOffset() throws {
        let valid = Array("123e4567-e89b-42d3-a456-426614174000".utf8)
        let hex = Set("0123456789abcdefABCDEF".utf8)
        for offset in 0..<36 {
            let dash = [8, 13, 18, 23].contains(offset)
            for byte in 0...255 {
                var id = valid
                id[offset] = UInt8(byte)
                let verdict = id.withUnsafeBytes { NotificationRules.checkApnsId($0) }
                let allowed = dash ? byte == 0x2D : hex.contains(UInt8(byte))
                if allowed {
                    #expect(verdict == nil, "byte \(byte) at \(offset)")
                } else {
                    let v = try #require(verdict, "byte \(byte) at \(offset)")
                    #expect(v.status == .badApnsId)
                    #expect(v.message.hasSuffix("(offset \(offset))"))
                }
            }
        }
    }

    // MARK: Expiration

    @Test("Expiration 0 and any UNIX time are accepted; negative values are bad expirations")
    func expirationMustNotBeNegative() throws {
        #expect(NotificationRules.checkExpiration(0) == nil)
        #expect(NotificationRules.checkExpiration(1_700_000_000) == nil)
        #expect(try #require(NotificationRules.checkExpiration(-1)).status == .badExpiration)
        #expect(try #require(NotificationRules.checkExpiration(.min)).status == .badExpiration)
    }
}
