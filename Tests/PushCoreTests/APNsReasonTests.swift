import PushCore
import Testing

/// A row of the reasons table as the tests expect it.
struct ReasonFacts: Sendable, CustomTestStringConvertible {
    let reason: APNsReason
    let status: Int32
    let retry: RetryClass
    init(_ reason: APNsReason, _ status: Int32, _ retry: RetryClass) {
        self.reason = reason
        self.status = status
        self.retry = retry
    }
    var testDescription: String { reason.text }
}

@Suite("APNsReason", .timeLimit(.minutes(1)))
struct APNsReasonTests {
    static let namedReasons = APNsReason.allCases.filter { $0 != .none && $0 != .unknown }

    @Test("Every named reason round-trips through its text", arguments: namedReasons)
    func roundTripsThroughText(reason: APNsReason) {
        #expect(APNsReason(text: reason.text) == reason)
        #expect(APNsReason(text: Substring(reason.text)) == reason)
    }

    @Test("A server's text maps to APNs's reasons only; the library's own names are unknown from a server", arguments: namedReasons)
    func serverTextMapsOnlyAPNsReasons(reason: APNsReason) {
        #expect(APNsReason(serverText: reason.text) == (reason.httpStatus == 0 ? .unknown : reason))
    }

    @Test("The static C text and the Swift text of every reason agree", arguments: APNsReason.allCases)
    func staticTextMatchesText(reason: APNsReason) {
        #expect(reason.staticText.description == reason.text)
        #expect(!reason.summary.isEmpty)
    }

    @Test("Texts that are not in the table map to .unknown", arguments: ["BrandNewReason", "", "unregistered", "Unregistered ", "Unknown"])
    func unknownTextsMapToUnknown(text: String) {
        #expect(APNsReason(text: text) == .unknown)
    }

    @Test(".none has empty text and an accepted status")
    func noneIsAccepted() {
        #expect(APNsReason.none.text == "")
        #expect(APNsReason.none.httpStatus == 200)
        #expect(APNsReason.none.rawValue == 0)
    }

    @Test("Reasons carry APNs's HTTP status and retry class", arguments: [
        ReasonFacts(.unregistered, 410, .never),
        ReasonFacts(.expiredToken, 410, .never),
        ReasonFacts(.badDeviceToken, 400, .never),
        ReasonFacts(.badTopic, 400, .never),
        ReasonFacts(.payloadTooLarge, 413, .never),
        ReasonFacts(.expiredProviderToken, 403, .token),
        ReasonFacts(.invalidProviderToken, 403, .refused),
        ReasonFacts(.tooManyRequests, 429, .later),
        ReasonFacts(.tooManyProviderTokenUpdates, 429, .connection),
        ReasonFacts(.idleTimeout, 400, .connection),
        ReasonFacts(.badPath, 404, .never),
        ReasonFacts(.methodNotAllowed, 405, .never),
        ReasonFacts(.internalServerError, 500, .backoff),
        ReasonFacts(.serviceUnavailable, 503, .backoff),
        ReasonFacts(.shutdown, 503, .backoff),
    ])
    func statusAndRetryClass(facts: ReasonFacts) {
        #expect(facts.reason.httpStatus == facts.status)
        #expect(facts.reason.retryClass == facts.retry)
    }

    @Test("Reasons decided by the library have status 0 and are local or of unknown outcome", arguments: [
        ReasonFacts(.timeout, 0, .unknown), ReasonFacts(.connectionLost, 0, .unknown),
        ReasonFacts(.cancelled, 0, .local), ReasonFacts(.cancelledInFlight, 0, .unknown),
        ReasonFacts(.queueTimeout, 0, .local), ReasonFacts(.connectFailed, 0, .local),
        ReasonFacts(.tlsFailed, 0, .local), ReasonFacts(.protocolError, 0, .unknown),
        ReasonFacts(.unknown, 0, .never),
    ])
    func localReasons(facts: ReasonFacts) {
        #expect(facts.reason.httpStatus == 0)
        #expect(facts.reason.retryClass == facts.retry)
    }

    @Test("Every reason APNs sends has a 4xx or 5xx status")
    func apnsReasonsAreErrors() {
        for r in Self.namedReasons where r.httpStatus != 0 {
            #expect((400..<600).contains(r.httpStatus), "\(r)")
        }
    }

    @Test("Reason texts and raw values are unique")
    func textsAreUnique() {
        #expect(Set(APNsReason.allCases.map(\.text)).count == APNsReason.allCases.count)
        #expect(Set(APNsReason.allCases.map(\.rawValue)).count == APNsReason.allCases.count)
    }
}
