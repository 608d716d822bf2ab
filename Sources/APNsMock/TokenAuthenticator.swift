#if canImport(Glibc)
import Glibc
#endif
import PushCore

/// The authenticator of a connection that uses provider tokens (`authorization: bearer <JWT>`,
/// apns.md "Token authentication"): the JWT is verified (`JWTVerifier`) and ages by the
/// server's clock; the topics are those of `Configuration.allowedTopics`.
///
/// A connection belongs to the team of its first verified token (another team's token,
/// however genuine, is InvalidProviderToken, as in Pushy's mock), and may change its token at
/// most once per `minTokenUpdateIntervalSeconds` (TooManyProviderTokenUpdates). APNs expects
/// one token per connection for up to an hour, so nearly every request repeats the token
/// verified last: such a request is recognised byte for byte as its header arrives and skips
/// the signature check.
final class TokenAuthenticator: MockAuthenticator {
    private let verifier: JWTVerifier
    private let clock: MockClock
    private let faults: FaultState
    private let minTokenUpdateIntervalSeconds: Int64
    private let topics: TopicAllowList

    /// The last `authorization` value that verified on this connection (`verifiedLength` bytes
    /// at `verified`, which holds `verifiedCapacity`), and what it said. Raw memory rather than
    /// an array: it is compared with every request's header, and reading an array held by a
    /// class costs a retain and a release of its buffer.
    private var verified: UnsafeMutableRawPointer
    private var verifiedCapacity = 512
    private var verifiedLength = 0
    private var verifiedIssuedAt: Int64 = 0
    private var verifiedKeyID: [UInt8] = []
    /// The team the connection is bound to by its first verified token.
    private var boundTeam: [UInt8]?
    /// When (server clock, seconds) the connection last adopted a new token.
    private var lastTokenChange: Int64 = 0

    /// Verifies with `settings.verifier` at `clock`'s time; `faults` may expire every token
    /// for a while (`MockFaults.expireTokensUntil`).
    init(settings: MockSettings, clock: MockClock, faults: FaultState) {
        verifier = settings.verifier
        self.clock = clock
        self.faults = faults
        minTokenUpdateIntervalSeconds = settings.minTokenUpdateIntervalSeconds
        topics = TopicAllowList(topics: settings.allowedTopics)
        verified = .allocate(byteCount: verifiedCapacity, alignment: 8)
    }

    deinit { verified.deallocate() }

    /// Whether `value` holds the bytes of the verified token (none verified yet: empty).
    @inline(__always)
    private func equalsVerified(_ value: UnsafeRawBufferPointer) -> Bool {
        guard value.count == verifiedLength else { return false }
        return value.count == 0 || memcmp(verified, value.baseAddress!, value.count) == 0
    }

    /// Either the verified token again, or one to check when the request is complete.
    func noteAuthorization(_ value: UnsafeRawBufferPointer, on request: MockStream) {
        if verifiedLength > 0, equalsVerified(value) {
            request.authorization = .sameAsVerified
        } else {
            request.authorization = .pending
            request.authorizationValue.removeAll(keepingCapacity: true)
            request.authorizationValue.append(contentsOf: value)
        }
    }

    func fillDefaults(_ request: MockStream) {}

    /// The token check: MissingProviderToken, InvalidProviderToken, ExpiredProviderToken,
    /// TooManyProviderTokenUpdates, or `.none`.
    func authorize(_ request: MockStream) -> APNsReason {
        if let until = faults.expireTokensUntil, clock.monotonicNanos() < until {
            return .expiredProviderToken
        }
        let now = clock.wallSeconds()
        switch request.authorization {
        case .absent:
            return .missingProviderToken
        case .sameAsVerified:
            break
        case .pending:
            // An earlier stream may have verified this very token since these headers came.
            if !request.authorizationValue.withUnsafeBytes({ equalsVerified($0) }) {
                return adopt(request.authorizationValue, now: now)
            }
        }
        // A cached token still ages: an hour after its iat it is expired, cached or not.
        return now - verifiedIssuedAt > verifier.maxAgeSeconds ? .expiredProviderToken : .none
    }

    func checkTopic(_ topic: UnsafeRawBufferPointer, base: UnsafeRawBufferPointer) -> APNsReason {
        topics.check(topic, base: base)
    }

    /// Verifies a token new to this connection and makes it the connection's token. A token
    /// with the key id and iat of the current one is the same token signed again, not an update.
    private func adopt(_ value: [UInt8], now: Int64) -> APNsReason {
        let result = value.withUnsafeBytes { verifier.verify(authorization: $0, now: now) }
        guard case .verified(let issuedAt, let keyID, let teamID) = result else {
            if case .rejected(let reason) = result { return reason }
            return .invalidProviderToken
        }
        if let boundTeam, boundTeam != teamID { return .invalidProviderToken }
        let isUpdate = boundTeam != nil && (keyID != verifiedKeyID || issuedAt != verifiedIssuedAt)
        if isUpdate {
            if now - lastTokenChange < minTokenUpdateIntervalSeconds { return .tooManyProviderTokenUpdates }
            lastTokenChange = now
        } else if boundTeam == nil {
            boundTeam = teamID
            lastTokenChange = now
        }
        if value.count > verifiedCapacity {
            verified.deallocate()
            verifiedCapacity = value.count
            verified = .allocate(byteCount: verifiedCapacity, alignment: 8)
        }
        value.withUnsafeBytes { verified.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        verifiedLength = value.count
        verifiedIssuedAt = issuedAt
        verifiedKeyID = keyID
        return .none
    }
}
