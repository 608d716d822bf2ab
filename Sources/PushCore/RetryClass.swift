/// How a notification that ended with a given reason may be retried (the reasons table's third
/// column; see Tables/reasons.tsv).
public enum RetryClass: Sendable, Equatable {
    /// Permanent for that notification: never resent.
    case never
    /// Permanent for that notification, and APNs refuses the credentials (InvalidProviderToken,
    /// BadCertificate...): new connections back off (`ReconnectBackoff`).
    case refused
    /// Retry after a delay (TooManyRequests).
    case later
    /// Server trouble (5xx): back off and treat the connection as suspect.
    case backoff
    /// Sign a new provider token, use a new connection, resend.
    case token
    /// That connection is unusable; resend on another.
    case connection
    /// The request may or may not have been processed: not resent automatically.
    case unknown
    /// Decided by the library before anything reached APNs.
    case local
}

extension APNsReason {
    /// A refusal of the connection's credentials rather than of one notification: the client
    /// backs off before opening connections (`ReconnectBackoff`). The reasons table's `token`
    /// and `refused` classes, and TooManyProviderTokenUpdates (tokens changed too often).
    public var isConnectionRefusal: Bool {
        retryClass == .token || retryClass == .refused || self == .tooManyProviderTokenUpdates
    }
}
