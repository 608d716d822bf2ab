/// The final outcome of one queue entry, as written to the outcomes stream (field names and
/// meanings: docs/worker.md, "Outcomes"). Exactly one is recorded per notification id.
public struct OutcomeRecord: Sendable, Equatable {
    /// ACCEPTED (APNs answered 200), REJECTED (APNs, or the worker's checks, said no: do not
    /// resend as is), FAILED (no final answer: transport trouble, dead-lettered, expired).
    public enum Kind: String, Sendable {
        case accepted = "ACCEPTED"
        case rejected = "REJECTED"
        case failed = "FAILED"
    }

    /// The producer's id ("" when the entry had none).
    public var id: String
    /// The stream entry it came from.
    public var entryID: String
    /// The app (credential set), when known.
    public var app: String = ""
    /// The entry's campaign (`campaign`), when it named one: echoed so that `swiftpush outcomes
    /// --campaign` can select its outcomes.
    public var campaign: String = ""
    /// The outcome.
    public var kind: Kind
    /// APNs's HTTP status; 0 when APNs did not answer (or was never asked).
    public var status: Int32 = 0
    /// The reason: APNs's (`Unregistered`), the library's (`Timeout`) or the worker's
    /// (`UnknownApp`, `DeadLetter`...); "" when accepted.
    public var reason: String = ""
    /// A human-readable detail (the validation message, the transport error).
    public var detail: String = ""
    /// The apns-id used (name-based UUID of `id`), "" when never sent.
    public var apnsID: String = ""
    /// Device token, when the entry had a valid one.
    public var token: String = ""
    /// Requests written to APNs for it, over every resend.
    public var attempts: Int = 0
    /// Times the queue delivered the entry (reclaims count).
    public var deliveries: Int = 1
    /// For 410 Unregistered/ExpiredToken: when APNs learned the token was invalid (ms).
    public var timestampMs: Int64 = 0
    /// From the first send to the outcome, microseconds.
    public var latencyUs: Int64 = 0
    /// FAILED after the request had been written (APNs may have delivered it).
    public var maybeDelivered = false

    /// An outcome of `kind` for entry `entryID` (id "" when it had none).
    public init(id: String, entryID: String, kind: Kind) {
        self.id = id
        self.entryID = entryID
        self.kind = kind
    }

    /// Whether the device token is gone for good (410): it also goes to the unregistered stream.
    public var tokenIsGone: Bool { status == 410 && !token.isEmpty }

    /// The outcome stream entry's fields (field, value, field, value...), format version 1.
    public func fields(worker: String) -> [String] {
        var f = ["v", "1", "id", id, "entry", entryID, "outcome", kind.rawValue, "status", String(status), "reason", reason]
        if !app.isEmpty { f += ["app", app] }
        if !campaign.isEmpty { f += ["campaign", campaign] }
        if !detail.isEmpty { f += ["detail", detail] }
        if !apnsID.isEmpty { f += ["apns_id", apnsID] }
        if !token.isEmpty { f += ["token", token] }
        f += ["attempts", String(attempts), "deliveries", String(deliveries), "worker", worker, "latency_us", String(latencyUs)]
        if timestampMs != 0 { f += ["timestamp_ms", String(timestampMs)] }
        if maybeDelivered { f += ["maybe_delivered", "1"] }
        return f
    }

    /// The unregistered-token stream entry's fields (only for `tokenIsGone`).
    public func unregisteredFields() -> [String] {
        ["token", token, "app", app, "id", id, "reason", reason, "timestamp_ms", String(timestampMs)]
    }
}
