/// What to make of an ExpiredProviderToken answer (`ProviderToken.expiredRejection`).
public enum TokenExpiryVerdict: Sendable, Equatable {
    /// A new token was signed: use it on a new connection.
    case resigned
    /// The rejected token was already replaced (another connection saw it first).
    case alreadyReplaced
    /// A token signed moments ago because of an earlier expiry is refused as expired too:
    /// signing again would not help (and counts as churn). The host's clock is the likely
    /// cause; `iat` is the refused token's, `localTime` this host's, both UNIX seconds.
    case clockSuspect(iat: Int64, localTime: Int64)

    /// The text of a `.clockSuspect` verdict, for results and `last_connection_error`.
    public static func clockSuspectText(iat: Int64, localTime: Int64) -> String {
        "APNs refuses freshly signed provider tokens as expired: check this host's clock; token iat=\(iat), local time=\(localTime)"
    }
}
