import PushCore
import Testing

@Suite("BroadcastRules and channel requests", .timeLimit(.minutes(1)))
struct BroadcastRulesTests {
    private func channel(_ s: String) -> NotificationRules.Violation? { withBytes(s) { BroadcastRules.checkChannelId($0) } }
    private func bundle(_ s: String) -> NotificationRules.Violation? { withBytes(s) { BroadcastRules.checkBundleId($0) } }
    private func payload(_ s: String) -> NotificationRules.Violation? { withBytes(s) { BroadcastRules.checkPayload($0) } }

    @Test("Channel ids are padded standard base64 of any size up to 256 bytes")
    func channelIds() {
        #expect(channel("dHN0LXNyY2gtY2hubA==") == nil, "Apple's example")
        #expect(channel("AAAA") == nil)
        #expect(channel("ab+/cd==") == nil)
        #expect(channel(String(repeating: "A", count: 256)) == nil, "no fixed size")
        #expect(channel(String(repeating: "A", count: 260))?.status == .badChannelId)
        #expect(channel("")?.status == .badChannelId)
        #expect(channel("abc")?.message.contains("multiple of 4") == true)
        #expect(channel("ab-_")?.status == .badChannelId, "base64url is not what APNs issues")
        #expect(channel("a=bc")?.status == .badChannelId, "padding only at the end")
        #expect(channel("a===")?.status == .badChannelId, "at most two =")
        #expect(channel("abc ")?.status == .badChannelId)
    }

    @Test("A broadcast names the bundle id, without the push type's suffix, with nothing that changes the path")
    func bundleIds() {
        #expect(bundle("com.example.app") == nil)
        #expect(bundle("com.example-app.Widget2") == nil)
        #expect(bundle("")?.status == .badTopic)
        #expect(bundle("com.example.app.push-type.liveactivity")?.message.contains("suffix") == true)
        #expect(bundle("com.example/../app")?.status == .badTopic)
        #expect(bundle("com.example.app?x=1")?.status == .badTopic)
        #expect(bundle("com.example app")?.status == .badTopic)
        #expect(bundle(String(repeating: "a", count: 256))?.status == .badTopic)
    }

    @Test("A broadcast payload may be 5,120 bytes, above the device limit for Live Activities")
    func payloads() {
        let at = "{" + String(repeating: " ", count: 5118) + "}"
        #expect(payload(at) == nil)
        #expect(payload(at + " ")?.status == .payloadTooLarge)
        #expect(payload("")?.status == .badPayload)
        #expect(payload("[1]")?.status == .badPayload)
        #expect(payload(#"{"aps":"#)?.status == .badPayload)
        #expect(PushType.liveactivity.payloadLimit < BroadcastRules.maxPayloadBytes)
    }

    @Test("Priority: 0 means 10; only 10, 5 and 1")
    func priorities() {
        #expect(BroadcastRules.resolvePriority(0) == .success(10))
        #expect(BroadcastRules.resolvePriority(5) == .success(5))
        #expect(BroadcastRules.resolvePriority(1) == .success(1))
        if case .success = BroadcastRules.resolvePriority(3) { Issue.record("3 is not a priority") }
    }

    @Test("Requests: method, path, channel header and body of each operation")
    func requests() throws {
        let create = try ChannelRequest(.create(storagePolicy: 1), bundleId: "com.example.app", requestId: "AAAAAAAA-BBBB-4CCC-8DDD-EEEEEEEEEEEE")
        #expect(create.method == "POST" && create.path == "/1/apps/com.example.app/channels" && create.channelId == nil)
        #expect(String(decoding: create.body, as: UTF8.self) == #"{"message-storage-policy":1,"push-type":"LiveActivity"}"#)
        #expect(create.requestId == "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee", "APNs wants lowercase")
        #expect(create.isSuccess(status: 201) && create.isSuccess(status: 200) && !create.isSuccess(status: 204))
        let read = try ChannelRequest(.read(channelId: "dHN0LXNyY2gtY2hubA=="), bundleId: "com.example.app")
        #expect(read.method == "GET" && read.channelId == "dHN0LXNyY2gtY2hubA==" && read.body.isEmpty && read.isSuccess(status: 200))
        let delete = try ChannelRequest(.delete(channelId: "dHN0LXNyY2gtY2hubA=="), bundleId: "com.example.app")
        #expect(delete.method == "DELETE" && delete.isSuccess(status: 204) && !delete.isSuccess(status: 201))
        let list = try ChannelRequest(.list, bundleId: "com.example.app")
        #expect(list.method == "GET" && list.path == "/1/apps/com.example.app/all-channels" && list.channelId == nil)
    }

    @Test("Requests are checked when made")
    func requestChecks() {
        #expect(throws: NotificationRules.Violation.self) { try ChannelRequest(.create(storagePolicy: 2), bundleId: "com.example.app") }
        #expect(throws: NotificationRules.Violation.self) { try ChannelRequest(.read(channelId: "x"), bundleId: "com.example.app") }
        #expect(throws: NotificationRules.Violation.self) { try ChannelRequest(.list, bundleId: "com/example") }
        #expect(throws: NotificationRules.Violation.self) { try ChannelRequest(.list, bundleId: "com.example.app", requestId: "nope") }
    }

    @Test("Configuration and list bodies are read as Apple writes them")
    func bodies() {
        let config = withBytes(#" {"push-type": "LiveActivity", "message-storage-policy": 0, "later": [1]} "#) { ChannelMessages.configuration($0) }
        #expect(config == .success(ChannelMessages.Configuration(storagePolicy: 0)))
        #expect(withBytes(#"{"message-storage-policy":0}"#) { ChannelMessages.configuration($0) } == .failure(.missingPushType))
        if case .success = withBytes(#"{"message-storage-policy":3,"push-type":"LiveActivity"}"#, { ChannelMessages.configuration($0) }) {
            Issue.record("policy 3 accepted")
        }
        if case .success = withBytes("[]", { ChannelMessages.configuration($0) }) { Issue.record("an array accepted") }
        let ids = ["dHN0LXNyY2gtY2hubA==", "AAAAAAAAAAAAAAAAAAAAAA=="]
        let json = ChannelMessages.listJSON(ids)
        #expect(String(decoding: json, as: UTF8.self) == #"{"channels":["dHN0LXNyY2gtY2hubA==","AAAAAAAAAAAAAAAAAAAAAA=="]}"#)
        #expect(json.withUnsafeBytes { ChannelMessages.channelIds($0) } == .success(ids))
        #expect(withBytes(#"{"channels": [ ]}"#) { ChannelMessages.channelIds($0) } == .success([]))
        #expect(withBytes(#"{"channels": [ "a\/bc" , "cdef" ]}"#) { ChannelMessages.channelIds($0) } == .success(["a/bc", "cdef"]))
        // One rule for an id in any answer (a create's, a list's): an id that breaks it fails
        // the list, named with what is wrong (issue 33: lists took what creates refused).
        let long = String(repeating: "A", count: 300)
        for (body, expected) in [(#"{"channels":["cdef","not base64!"]}"#, #"channel id 1 of the list ("not base64!") is not base64: its length (11) is not a multiple of 4"#),
                                 (#"{"channels":["cdef","ab\u0000="]}"#, #"channel id 1 of the list ("ab\0=") is not base64: unexpected character at offset 2"#),
                                 (#"{"channels":[""]}"#, #"channel id 0 of the list ("") is empty"#),
                                 (#"{"channels":["\#(long)"]}"#, #"channel id 0 of the list (""# + String(long.prefix(80)) + #"...") is longer than 256 bytes"#)] {
            let got = withBytes(body) { ChannelMessages.channelIds($0) }
            #expect(got == .failure(.malformed(expected)), "\(body)")
        }
        // The create answer's check is the same function, with the same words.
        #expect(ChannelMessages.answeredIdViolation("not base64!", "APNs created the channel, but its apns-channel-id")
                == #"APNs created the channel, but its apns-channel-id ("not base64!") is not base64: its length (11) is not a multiple of 4"#)
        #expect(ChannelMessages.answeredIdViolation(long, "x")?.hasSuffix("is longer than 256 bytes") == true)
        #expect(ChannelMessages.answeredIdViolation("dHN0LXNyY2gtY2hubA==", "x") == nil)
        if case .success = withBytes(#"{"channels":[1]}"#, { ChannelMessages.channelIds($0) }) { Issue.record("a number accepted") }
        if case .success = withBytes(#"{"other":[]}"#, { ChannelMessages.channelIds($0) }) { Issue.record("no channels member accepted") }
    }
}
