/// What became of a notification: one of three, exactly once per notification the client took.
public enum PushOutcome: Sendable, Hashable, CustomStringConvertible {
    /// APNs accepted it (200).
    case accepted
    /// APNs refused it (4xx; or a 429/5xx retried until the deadline or the attempt budget ran
    /// out): don't send it again as it is. `PushResult.reason` says why (410 Unregistered: the
    /// token is gone, since `PushResult.timestamp`).
    case rejected
    /// No answer: a timeout, a lost connection, a TLS failure, cancelled at close. Whether APNs
    /// saw it is unknown for `.timeout`, `.connectionLost` and `.cancelledInFlight`.
    case failed

    /// "accepted", "rejected" or "failed".
    public var description: String {
        switch self {
        case .accepted: return "accepted"
        case .rejected: return "rejected"
        case .failed: return "failed"
        }
    }
}
