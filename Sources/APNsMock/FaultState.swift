import PushCore

/// The faults as the I/O thread applies them, server-wide: the faults in force, with the
/// counters and the random sequence that the every-Nth and rate faults need. Rebuilt from
/// scratch whenever the faults change (`refresh`), which is what restarts the counters.
///
/// One per server, shared by reference by the fault handlers (`ServerFaultHandler`,
/// `TokenFaultHandler`), the token authenticator and the connections. What the per-request
/// path reads is kept in plain stored properties, so a request with no faults set costs a few
/// loads. The I/O thread's alone; other threads set faults through the `FaultMailbox`.
final class FaultState {
    private let mailbox: FaultMailbox
    /// The faults in force.
    private(set) var faults: MockFaults
    /// The mailbox generation they came from.
    private(set) var generation: UInt64
    /// Whether any fault concerns requests (else every request fault check is skipped).
    private(set) var affectsRequests = false
    /// `faults.responseDelayMillis` (0: answer at once), read once per answer.
    private(set) var delayMillis = 0
    /// Whether a fault names device tokens, so a request's token must be looked at.
    private(set) var namesTokens = false
    /// `faults.dropLimitToOneAfterRejection`.
    private(set) var dropLimitAfterRejection = false
    /// `faults.expireTokensUntil` (a monotonic time on the server's clock).
    private(set) var expireTokensUntil: UInt64?

    private var unregistered: [String: Int64] = [:]
    private var tooManyRequests: Set<String> = []
    private var stallTokens: Set<String> = []
    private var streams = 0
    private var requests = 0
    private var random = SplitMix64(seed: 1)

    /// The faults of `mailbox` as they are now.
    init(mailbox: FaultMailbox) {
        self.mailbox = mailbox
        (faults, generation) = mailbox.current()
        take(faults)
    }

    /// Takes faults set since the last look (one atomic load when nothing changed).
    @inline(__always)
    func refresh() {
        if mailbox.generation != generation {
            (faults, generation) = mailbox.current()
            take(faults)
        }
    }

    private func take(_ faults: MockFaults) {
        affectsRequests = faults.affectsRequests
        delayMillis = faults.responseDelayMillis
        dropLimitAfterRejection = faults.dropLimitToOneAfterRejection
        expireTokensUntil = faults.expireTokensUntil
        unregistered = Dictionary(faults.unregisteredTokens.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { a, _ in a })
        tooManyRequests = Set(faults.tooManyRequestsTokens.map { $0.lowercased() })
        stallTokens = Set(faults.stallTokens.map { $0.lowercased() })
        namesTokens = !unregistered.isEmpty || !tooManyRequests.isEmpty || !stallTokens.isEmpty
        streams = 0
        requests = 0
        random = SplitMix64(seed: faults.seed)
    }

    /// True when `n` asks for every-Nth behaviour and `count` is a multiple of it.
    @inline(__always)
    private static func hits(_ n: Int?, _ count: Int) -> Bool {
        guard let n, n > 0 else { return false }
        return count % n == 0
    }

    /// Counts a request stream as it opens; true when it is to be refused.
    func refuseThisStream() -> Bool {
        guard let n = faults.refuseEveryNthStream, n > 0 else { return false }
        streams += 1
        return streams % n == 0
    }

    /// Counts a complete request and decides the faults that come before validation: a stall,
    /// a 500 or a 503, else `.pass`. `token` is the lowercased device token, or nil when no
    /// fault names tokens.
    func early(token: String?) -> MockVerdict {
        requests += 1
        if Self.hits(faults.stallEveryNth, requests) { return .stall }
        if let token, stallTokens.contains(token) { return .stall }
        if Self.hits(faults.status500EveryNth, requests) { return .answer(.internalServerError) }
        if Self.hits(faults.status503EveryNth, requests) { return .answer(.serviceUnavailable) }
        // Draw only for rates in use, so a 503 rate alone gives the same sequence whatever
        // the 500 rate was.
        if faults.status500Rate > 0, random.nextUnit() < faults.status500Rate { return .answer(.internalServerError) }
        if faults.status503Rate > 0, random.nextUnit() < faults.status503Rate { return .answer(.serviceUnavailable) }
        return .pass
    }

    /// The token faults for a valid request: 410 with its timestamp, or 429; else `.pass`.
    func late(token: String?) -> MockVerdict {
        guard let token else { return .pass }
        if let t = unregistered[token] { return .answer(.unregistered, timestamp: t) }
        if tooManyRequests.contains(token) { return .answer(.tooManyRequests) }
        return .pass
    }
}
