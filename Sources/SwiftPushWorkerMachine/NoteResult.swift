import PushCore

/// What the client said about one notification the machine sent (the driver turns the
/// engine's results into these).
public struct NoteResult: Sendable {
    /// The machine's tag for the notification.
    public var tag: UInt64
    /// ACCEPTED, REJECTED or FAILED.
    public var kind: OutcomeRecord.Kind
    /// APNs's status (0: no answer).
    public var status: Int32
    /// The reason (`.none` when accepted), and its text as APNs or the library gave it.
    public var reason: APNsReason
    public var reasonText: String
    /// Requests that may have reached APNs for this send.
    public var attempts: Int
    /// For a 410: when APNs learned the token was invalid (ms).
    public var timestampMs: Int64

    public init(tag: UInt64, kind: OutcomeRecord.Kind, status: Int32, reason: APNsReason, reasonText: String = "",
                attempts: Int = 1, timestampMs: Int64 = 0) {
        self.tag = tag
        self.kind = kind
        self.status = status
        self.reason = reason
        self.reasonText = reasonText
        self.attempts = attempts
        self.timestampMs = timestampMs
    }
}

/// What the client took of a `send`: every tag is in exactly one list.
public struct SubmitReport: Sendable {
    /// Taken: each will have a result.
    public var taken: [UInt64] = []
    /// Refused by the library's rules (no result will come): the rule broken.
    public var refused: [(tag: UInt64, violation: NotificationRules.Violation)] = []
    /// Not taken: the client had no room (send again later) or is closing.
    public var notTaken: [UInt64] = []
    /// Whether the client is closing (`notTaken` then stays unsent).
    public var closing = false

    public init() {}
}
