/// What the claim of one entry takes: the guards of its notification ids (a batch's element
/// ids; a single or multicast entry's one id) and, when asked, its progress.
public struct ClaimRequest: Sendable, Equatable {
    /// The stream entry.
    public var entryID: String
    /// The entry whose ids' guards it may find (it came back from the delayed set), if any.
    public var origin: String?
    /// Whether to return the entry's progress (an entry of one notification never has any).
    public var wantProgress: Bool
    /// The ids to claim.
    public var ids: [String]

    public init(entryID: String, origin: String?, wantProgress: Bool, ids: [String]) {
        self.entryID = entryID
        self.origin = origin
        self.wantProgress = wantProgress
        self.ids = ids
    }
}

/// What the claim found for one entry.
public struct ClaimAnswer: Sendable, Equatable {
    /// Which of its notifications have outcomes already (a bitmap: bit i at byte i/8, high bit
    /// first), when it has progress.
    public var progress: [UInt8]?
    /// Ids another entry owns (within the guard TTL): the id's position in the request, and
    /// the owner.
    public var duplicates: [Duplicate] = []

    /// One id taken by another entry.
    public struct Duplicate: Sendable, Equatable {
        public var position: Int
        public var owner: String
        public init(position: Int, owner: String) {
            self.position = position
            self.owner = owner
        }
    }

    public init(progress: [UInt8]? = nil, duplicates: [Duplicate] = []) {
        self.progress = progress
        self.duplicates = duplicates
    }

    /// Whether notification `index` has its outcome already.
    public func isDone(_ index: Int) -> Bool {
        guard let progress, index >> 3 < progress.count else { return false }
        return progress[index >> 3] & (0x80 >> UInt8(index & 7)) != 0
    }
}
