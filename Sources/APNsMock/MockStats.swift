import PushCore

/// A snapshot of the mock server's counters, taken with `MockServer.stats()`.
public struct MockStats: Sendable, Equatable, CustomStringConvertible {
    /// Requests answered (any status).
    public var requests: Int = 0
    /// Requests answered with 200.
    public var accepted: Int = 0
    /// Requests answered with an error, by reason text (`"BadDeviceToken"` → count).
    public var rejectedByReason: [String: Int] = [:]
    /// Connections accepted since start (TCP accepts, whether or not TLS then succeeded).
    public var connections: Int = 0
    /// Connections open now.
    public var openConnections: Int = 0
    /// Request streams that closed without an answer (reset by the client, or the
    /// connection went away first).
    public var unansweredStreams: Int = 0
    /// Streams refused with RST_STREAM REFUSED_STREAM because the client opened more than
    /// MAX_CONCURRENT_STREAMS allowed (typically before it saw the initial limit of 1).
    public var refusedStreams: Int = 0
    /// The most request streams that were open at once on one connection: shows whether
    /// clients used the raised MAX_CONCURRENT_STREAMS.
    public var peakConcurrentStreams: Int = 0

    /// Requests answered with an error.
    public var rejected: Int { rejectedByReason.values.reduce(0, +) }

    /// Creates an empty snapshot.
    public init() {}

    /// One line for people: `requests 10 accepted 8 rejected 2 (BadDeviceToken 2) ...`.
    public var description: String {
        var s = "requests \(requests) accepted \(accepted) rejected \(rejected)"
        if !rejectedByReason.isEmpty {
            let parts = rejectedByReason.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
            s += " (" + parts.joined(separator: ", ") + ")"
        }
        s += " refused-streams \(refusedStreams) unanswered-streams \(unansweredStreams) connections \(connections) peak-streams \(peakConcurrentStreams)"
        return s
    }
}

/// The live counters behind `MockStats`.
///
/// Written by the server's I/O thread, read by any thread through `snapshot()`; every access
/// holds `lock`. An uncontended lock costs tens of nanoseconds, far below a request's cost.
final class MockStatsRecorder: @unchecked Sendable {
    private let lock = PThreadMutex()
    private var stats = MockStats()
    /// Rejections counted by reason code, so the I/O thread never builds a String per error.
    private var rejectedByCode: [APNsReason: Int] = [:]

    func connectionOpened() {
        lock.withLock {
            stats.connections += 1
            stats.openConnections += 1
        }
    }

    func connectionClosed() {
        lock.withLock { stats.openConnections -= 1 }
    }

    /// Records one answered request: `reason` is `.none` for a 200.
    func answered(_ reason: APNsReason) {
        lock.withLock {
            stats.requests += 1
            if reason == .none {
                stats.accepted += 1
            } else {
                rejectedByCode[reason, default: 0] += 1
            }
        }
    }

    func streamUnanswered() {
        lock.withLock { stats.unansweredStreams += 1 }
    }

    func streamRefused() {
        lock.withLock { stats.refusedStreams += 1 }
    }

    func observeConcurrentStreams(_ n: Int) {
        lock.withLock { if n > stats.peakConcurrentStreams { stats.peakConcurrentStreams = n } }
    }

    func snapshot() -> MockStats {
        lock.withLock {
            var s = stats
            for (code, n) in rejectedByCode { s.rejectedByReason[code.text, default: 0] += n }
            return s
        }
    }
}
