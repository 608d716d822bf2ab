/// The notifications of an entry that a 429 sends to the delayed set: they leave the entry as a
/// new entry of the same kind, parked in `delayed:{s}` until `dueMillis`, then put back in the
/// stream (`WorkQueue` promote). Its fields are the entry's with `retries` + 1 and `origin` (the
/// entry whose ids' guards they keep naming); its notifications are `pieces`, joined into
/// `joinField` when they come back — a multicast's tokens (`tokens`, comma-separated), a batch's
/// elements (`notifications`, a JSON array) — or none for a single entry (its fields say all).
public struct DelayedPart: Sendable, Equatable {
    /// When it goes back into the stream (UNIX ms).
    public var dueMillis: Int64
    /// Its member of the delayed set: `<entry id>:<first index>` (unique: an index is parked once).
    public var member: String
    /// `tokens`, `notifications` or "" (single).
    public var joinField: String
    /// The new entry's fields, but the joined one.
    public var fields: [Field]
    /// Each parked notification: its index in the entry and its piece (a token, an element's JSON).
    public var pieces: [Piece]

    /// One field of the new entry.
    public struct Field: Sendable, Equatable {
        public var name: [UInt8]
        public var value: [UInt8]
    }

    /// One parked notification.
    public struct Piece: Sendable, Equatable {
        public var index: Int
        public var bytes: [UInt8]
    }
}
