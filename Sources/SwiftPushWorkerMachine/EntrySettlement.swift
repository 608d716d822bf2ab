/// What one settle does for one entry (docs/worker.md, "Settling"): the outcomes of the
/// notifications it covers, the ones a 429 parks, and whether every notification of the entry
/// then has its outcome (`final`: the entry is acknowledged and deleted) or only some (a
/// checkpoint: the entry's progress records which). The queue applies it atomically, and only
/// to notifications no settle has covered yet, so that each gets exactly one outcome whoever
/// settles the entry and however often.
public struct EntrySettlement: Sendable {
    /// Where the entry's outcomes are written.
    public enum Destination: Sendable, Equatable {
        /// One `outcomes` entry per outcome (format 1: single entries of a worker set so).
        case format1
        /// Objects of one `v 2` outcomes entry per settle (format 2: single entries).
        case format2
        /// One record per entry in one `v 3` outcomes entry per settle (multicast and batch
        /// entries always; single entries with `outcome_format` 3).
        case record
    }

    /// One notification's outcome, other than a plain acceptance.
    public struct Other: Sendable {
        /// Its index in the entry.
        public var index: Int
        /// The outcome.
        public var outcome: OutcomeRecord
    }

    /// The stream entry.
    public var entryID: String
    /// Its kind.
    public var kind: EntryKind
    /// Where its outcomes go.
    public var destination: Destination
    /// How many notifications the entry carries.
    public var count: Int
    /// Whether every notification of the entry has its outcome (or is parked) once this is
    /// applied.
    public var final: Bool
    /// The entry's app and campaign ("" when none), for the record and the counters.
    public var app: String
    public var campaign: String
    /// The entry-level id (single, multicast), for the record.
    public var id: String?
    /// The entry's delivery count, for the record.
    public var deliveries: Int
    /// Notifications accepted by APNs (indexes, ascending).
    public var accepted: [Int] = []
    /// A batch's: the ids of `accepted`, in the same order.
    public var acceptedIDs: [String] = []
    /// Every other outcome, one per notification.
    public var others: [Other] = []
    /// An outcome for every notification of the entry not otherwise covered (by this or an
    /// earlier settle): a multicast's refusal, dead letter or expiry, recorded as one group.
    public var rest: OutcomeRecord?
    /// Notifications a 429 parks.
    public var delayed: DelayedPart?
    /// Tokens a multicast listed more than once (recorded with the final record).
    public var repeats = 0

    /// A settlement of `entry` that covers nothing yet.
    public init(entryID: String, kind: EntryKind, destination: Destination, count: Int, final: Bool, app: String,
                campaign: String, id: String?, deliveries: Int) {
        self.entryID = entryID
        self.kind = kind
        self.destination = destination
        self.count = count
        self.final = final
        self.app = app
        self.campaign = campaign
        self.id = id
        self.deliveries = deliveries
    }

    /// How many notifications it gives an outcome or parks (the rest counted as one: its size
    /// is known only to the queue).
    public var size: Int { accepted.count + others.count + (delayed?.pieces.count ?? 0) + (rest == nil ? 0 : 1) }
}
