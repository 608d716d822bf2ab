/// A stream entry read and checked (`EntryReader`): its kind, its notifications (each ready to
/// send or refused), what is claimed for it, and what its outcome records name.
public struct WorkEntry: Sendable {
    /// The entry as read from the stream (its id, fields and delivery count).
    public var raw: QueueEntry
    /// Single, multicast or batch.
    public let kind: EntryKind
    /// The app (credential set) it names; "" when it names none.
    public let app: String
    /// The campaign it belongs to (`campaign`); "" when none.
    public let campaign: String
    /// The entry whose ids it carries when it came back from the delayed set (`origin`): the
    /// ids' guards name that entry. Nil for an entry a producer wrote.
    public let origin: String?
    /// Trips through the delayed-retry set so far (`retries`).
    public let retries: Int
    /// The entry-level notification id (single, multicast); nil when missing or invalid, and for
    /// a batch (its elements have ids of their own).
    public let id: String?
    /// How many notifications it carries: each gets exactly one outcome.
    public let count: Int
    /// Tokens a multicast entry listed more than once (each was sent once).
    public let repeats: Int
    /// A refusal that covers every notification of the entry (a multicast's shared fields, a
    /// batch whose array cannot be read): recorded as one group, not per notification.
    let rejection: EntryRejection?
    /// The notifications, in order (empty with `rejection`).
    var notes: [NoteSlot]
    /// The bytes the notes' ranges point into: the entry's own storage, with any string a batch
    /// element escaped appended, decoded.
    package var storage: [UInt8]
    /// A batch's elements: each one's JSON object in `storage`.
    var elements: [Range<Int>] = []
    /// A multicast entry's payload (the same for every token), in `storage`.
    package let sharedPayload: Range<Int>?
    /// The ids whose guards the claim takes, and for each the note it belongs to (a batch's
    /// elements; a single or multicast entry's one id, note 0).
    let claims: [(id: String, note: Int)]

    /// The stream id.
    public var entryID: String { raw.entryID }

    /// The bytes of `range` of the storage, as text.
    func text(_ range: Range<Int>) -> String { String(decoding: storage[range], as: UTF8.self) }
}
