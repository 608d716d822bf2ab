/// The two clocks the machine reads, given with every event (never read by the machine
/// itself, so that tests drive it with made-up times): monotonic nanoseconds for everything
/// timed, UNIX milliseconds for what is compared with the world (`not_after`, delayed retries).
public struct WorkerTime: Sendable, Equatable {
    /// Monotonic nanoseconds.
    public var nanos: UInt64
    /// UNIX milliseconds.
    public var wallMillis: Int64

    public init(nanos: UInt64, wallMillis: Int64) {
        self.nanos = nanos
        self.wallMillis = wallMillis
    }

    /// `millis` later.
    public func adding(millis: Int) -> WorkerTime {
        WorkerTime(nanos: nanos + UInt64(max(0, millis)) * 1_000_000, wallMillis: wallMillis + Int64(max(0, millis)))
    }
}
