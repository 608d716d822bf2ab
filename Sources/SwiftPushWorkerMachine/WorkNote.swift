import PushCore

/// One notification of an entry that passed the worker's checks: what the client is given. Its
/// byte fields are ranges of the entry's storage (`WorkEntry.storage`), not copies.
package struct WorkNote: Sendable {
    /// The notification id (a batch element's own; the entry's for single and multicast).
    var id: String
    /// The device token, hex.
    package var token: Range<Int>
    /// The JSON payload; nil: the entry's shared payload (multicast).
    package var payload: Range<Int>?
    /// apns-topic; nil: the app's default topic.
    package var topic: String?
    /// apns-collapse-id, when given.
    package var collapseID: String?
    /// apns-push-type.
    package var pushType: PushType
    /// apns-priority (0: the push type's default).
    package var priority: Int32
    /// apns-expiration in UNIX seconds, when given.
    package var expiration: Int64?
    /// Past this UNIX time (seconds) it is not sent (FAILED Expired) nor retried.
    var notAfter: Int64?
    /// The apns-id: the name-based UUID of `id` (single, batch) or of `id + "/" + token`
    /// (multicast), the same on every resend.
    package var apnsID: UUID128
}

/// Where one notification of an entry stands once read: ready to send, or refused by the
/// worker's checks (a REJECTED outcome with this reason, never sent).
enum NoteSlot: Sendable {
    case ready(WorkNote)
    case rejected(EntryRejection, id: String, token: Range<Int>?)

    /// The notification id (for its outcome record).
    var id: String {
        switch self {
        case .ready(let n): return n.id
        case .rejected(_, let id, _): return id
        }
    }

    /// Where its token is in the entry's storage, if it has one.
    var token: Range<Int>? {
        switch self {
        case .ready(let n): return n.token
        case .rejected(_, _, let t): return t
        }
    }
}
