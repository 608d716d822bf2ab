import PushCore
/// The JWT that authenticates token-based (`.p8`) requests, shared by every connection of a
/// client, and the rules for refreshing it.
///
/// Apple: refresh no more often than every 20 minutes and at least every 60 (an `iat` older than
/// an hour gets 403 ExpiredProviderToken); peers refresh at 50–55 minutes. One token per
/// (team, key): changing tokens often on a connection gets 429 TooManyProviderTokenUpdates.
public final class ProviderToken: @unchecked Sendable {
    /// A token is re-signed once it is this old (seconds).
    public static let refreshAge: Int64 = 50 * 60
    /// Routine refreshes never replace a token younger than this (seconds); an
    /// ExpiredProviderToken answer may (see `expiredRejection`).
    public static let minimumAge: Int64 = 20 * 60

    private let key: SigningKey
    /// The 10-character key id (`kid`).
    public let keyID: String
    /// The 10-character team id (`iss`).
    public let teamID: String
    private let clock: PushClock
    /// Guards the three values below: a client with several I/O threads shares one token (one
    /// JWT per team and key), and any of them may re-sign it.
    private let lock = PThreadMutex()
    private var _headerValue: [UInt8] = []
    private var _issuedAt: Int64 = 0
    private var _generation: Int = 0
    /// The current token was signed because APNs called the previous one expired, and no
    /// request with it has been accepted yet.
    private var _signedAfterExpiry = false

    /// `bearer <jwt>`: the value of the `authorization` header.
    public var headerValue: [UInt8] { lock.withLock { _headerValue } }
    /// `iat` of the current token (UNIX seconds).
    public var issuedAt: Int64 { lock.withLock { _issuedAt } }
    /// Increases each time a new token is signed; connections compare it to notice a change.
    public var generation: Int { lock.withLock { _generation } }

    /// Why a token could not be made.
    public struct SignError: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    /// Signs the first token at once, so that a bad key is reported when the client opens.
    public init(key: SigningKey, keyID: String, teamID: String, clock: PushClock) throws(SignError) {
        guard !keyID.isEmpty, keyID.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != 0x22 && $0 != 0x5C }) else {
            throw SignError(description: "key id must be printable ASCII (Apple's are 10 characters)")
        }
        guard !teamID.isEmpty, teamID.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != 0x22 && $0 != 0x5C }) else {
            throw SignError(description: "team id must be printable ASCII (Apple's are 10 characters)")
        }
        self.key = key
        self.keyID = keyID
        self.teamID = teamID
        self.clock = clock
        try sign(at: clock.wallSeconds())
    }

    /// The current `authorization` value, re-signed first when the token has reached
    /// `refreshAge`. Thread-safe.
    public func current() -> [UInt8] { currentWithGeneration().value }

    /// The current value and its generation, read together (re-signed first when due).
    public func currentWithGeneration() -> (value: [UInt8], generation: Int) {
        let now = clock.wallSeconds()
        return lock.withLock {
            if now - _issuedAt >= Self.refreshAge { try? sign(at: now) }
            return (_headerValue, _generation)
        }
    }

    /// What to make of an ExpiredProviderToken answer (see `expiredRejection`): a value of
    /// PushCore, so that the client's machine reads it without OpenSSL.
    public typealias ExpiryVerdict = TokenExpiryVerdict

    /// APNs answered ExpiredProviderToken to a request carrying the token of `generation`.
    ///
    /// The 20-minute rule (`minimumAge`) is about routine refreshes: a token APNs calls expired
    /// is useless, so it is re-signed once whatever its age. If the token signed for that reason
    /// is refused as expired as well, before any request with it was accepted, it is not
    /// re-signed again: the verdict names the clock. `accepted(generation:)` ends that state.
    public func expiredRejection(generation: Int) -> ExpiryVerdict {
        let now = clock.wallSeconds()
        return lock.withLock {
            // Several connections (and I/O threads) may report the same token: the first decides.
            guard generation == _generation else { return .alreadyReplaced }
            if _signedAfterExpiry { return .clockSuspect(iat: _issuedAt, localTime: now) }
            guard (try? sign(at: now)) != nil else { return .alreadyReplaced }
            _signedAfterExpiry = true
            return .resigned
        }
    }

    /// A request carrying the token of `generation` was accepted: a later expiry may re-sign.
    public func accepted(generation: Int) {
        lock.withLock {
            if generation == _generation { _signedAfterExpiry = false }
        }
    }

    /// The text of a `.clockSuspect` verdict, for results and `last_connection_error`.
    public static func clockSuspectText(iat: Int64, localTime: Int64) -> String {
        TokenExpiryVerdict.clockSuspectText(iat: iat, localTime: localTime)
    }

    /// Signs a token for `now` (with `lock` held, or from init).
    private func sign(at now: Int64) throws(SignError) {
        let header = Base64URL.encode(Array("{\"alg\":\"ES256\",\"kid\":\"\(keyID)\"}".utf8))
        let claims = Base64URL.encode(Array("{\"iss\":\"\(teamID)\",\"iat\":\(now)}".utf8))
        let signingInput = header + [UInt8(ascii: ".")] + claims
        guard let signature = signingInput.withUnsafeBytes({ key.signES256($0) }) else {
            throw SignError(description: "signing the provider token failed: " + OpenSSLError.drain())
        }
        _headerValue = Array("bearer ".utf8) + signingInput + [UInt8(ascii: ".")] + Base64URL.encode(signature)
        _issuedAt = now
        _generation += 1
        _signedAfterExpiry = false
    }
}
