import PushCore

/// The I/O thread's working copy of the faults, with the counters and the random sequence that
/// the every-Nth and rate faults need. Rebuilt from scratch whenever the faults change, which
/// is what restarts the counters.
struct FaultState {
    /// The faults in force.
    let faults: MockFaults
    /// The mailbox generation they came from.
    let generation: UInt64
    /// Whether any fault concerns requests (else every check below is skipped).
    let affectsRequests: Bool
    /// `faults.responseDelayMillis` (0: answer at once), read once per answer.
    let delayMillis: Int
    /// Whether a fault names device tokens, so the token must be looked at.
    let namesTokens: Bool

    private let unregistered: [String: Int64]
    private let tooManyRequests: Set<String>
    private let stallTokens: Set<String>
    private var streams = 0
    private var requests = 0
    private var random: SplitMix64

    init(_ faults: MockFaults, generation: UInt64) {
        self.faults = faults
        self.generation = generation
        affectsRequests = faults.affectsRequests
        delayMillis = faults.responseDelayMillis
        unregistered = Dictionary(faults.unregisteredTokens.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { a, _ in a })
        tooManyRequests = Set(faults.tooManyRequestsTokens.map { $0.lowercased() })
        stallTokens = Set(faults.stallTokens.map { $0.lowercased() })
        namesTokens = !unregistered.isEmpty || !tooManyRequests.isEmpty || !stallTokens.isEmpty
        random = SplitMix64(seed: faults.seed)
    }

    /// True when `n` asks for every-Nth behaviour and `count` is a multiple of it.
    @inline(__always)
    private static func hits(_ n: Int?, _ count: Int) -> Bool {
        guard let n, n > 0 else { return false }
        return count % n == 0
    }

    /// Counts a request stream as it opens; true when it is to be refused.
    mutating func refuseThisStream() -> Bool {
        guard let n = faults.refuseEveryNthStream, n > 0 else { return false }
        streams += 1
        return streams % n == 0
    }

    /// What the server-side faults make of a request before it is validated.
    enum Early: Equatable {
        /// Nothing: validate it.
        case none
        /// Never answer it.
        case stall
        /// Answer with this reason (500 or 503) without looking further.
        case fail(APNsReason)
    }

    /// Counts a complete request and decides the faults that come before validation.
    /// `token` is the lowercased device token, or nil when no fault names tokens.
    mutating func early(token: String?) -> Early {
        requests += 1
        if Self.hits(faults.stallEveryNth, requests) { return .stall }
        if let token, stallTokens.contains(token) { return .stall }
        if Self.hits(faults.status500EveryNth, requests) { return .fail(.internalServerError) }
        if Self.hits(faults.status503EveryNth, requests) { return .fail(.serviceUnavailable) }
        // Draw only for rates in use, so a 503 rate alone gives the same sequence whatever
        // the 500 rate was.
        if faults.status500Rate > 0, random.nextUnit() < faults.status500Rate { return .fail(.internalServerError) }
        if faults.status503Rate > 0, random.nextUnit() < faults.status503Rate { return .fail(.serviceUnavailable) }
        return .none
    }

    /// The token faults for a valid request: 410 with its timestamp, or 429.
    func late(token: String?) -> (reason: APNsReason, timestamp: Int64)? {
        guard let token else { return nil }
        if let t = unregistered[token] { return (.unregistered, t) }
        if tooManyRequests.contains(token) { return (.tooManyRequests, -1) }
        return nil
    }
}

/// A small seeded generator (SplitMix64): the same seed gives the same faults in every run.
struct SplitMix64 {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A uniform value in [0, 1).
    mutating func nextUnit() -> Double { Double(next() >> 11) * 0x1p-53 }
}
