import PushCore
import Testing

@Suite("PushType", .timeLimit(.minutes(1)))
struct PushTypeTests {
    @Test("Every push type round-trips through its apns-push-type header value", arguments: PushType.allCases)
    func roundTripsHeaderValue(type: PushType) {
        #expect(PushType(headerValue: type.headerValue.description) == type)
    }

    @Test("Unknown header values give no push type", arguments: ["", "Alert", "notification", "voip "])
    func rejectsUnknownHeaderValues(value: String) {
        #expect(PushType(headerValue: value) == nil)
    }

    @Test("voip allows 5120-byte payloads and every other type 4096", arguments: PushType.allCases)
    func payloadLimits(type: PushType) {
        #expect(type.payloadLimit == (type == .voip ? 5120 : 4096))
    }

    @Test("Push types with required topic suffixes use Apple's suffixes")
    func topicSuffixes() {
        #expect(PushType.voip.topicSuffix == ".voip")
        #expect(PushType.liveactivity.topicSuffix == ".push-type.liveactivity")
        #expect(PushType.complication.topicSuffix == ".complication")
        #expect(PushType.fileprovider.topicSuffix == ".pushkit.fileprovider")
        #expect(PushType.location.topicSuffix == ".location-query")
        #expect(PushType.pushtotalk.topicSuffix == ".voip-ptt")
        #expect(PushType.widgets.topicSuffix == ".push-type.widgets")
        #expect(PushType.controls.topicSuffix == ".push-type.controls")
    }
}
