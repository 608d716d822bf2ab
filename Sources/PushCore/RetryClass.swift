/// How a notification that ended with a given reason may be retried (the reasons table's third
/// column; see Tables/reasons.tsv).
public enum RetryClass: Sendable, Equatable {
    /// Permanent for that notification: never resent.
    case never
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
