/// Counters kept by the client (published under the lock).
public struct ClientCounters: Sendable, Equatable {
    public init() {}
    public var accepted: UInt64 = 0
    public var rejected: UInt64 = 0
    public var failed: UInt64 = 0
    public var resent: UInt64 = 0
    public var goaways: UInt64 = 0
    public var connectionsOpened: UInt64 = 0
    public var sent: UInt64 = 0

    public mutating func add(_ other: ClientCounters) {
        accepted += other.accepted
        rejected += other.rejected
        failed += other.failed
        resent += other.resent
        goaways += other.goaways
        connectionsOpened += other.connectionsOpened
        sent += other.sent
    }
}
