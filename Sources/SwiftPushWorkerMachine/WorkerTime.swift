#if canImport(Glibc)
import Glibc
#endif
import PushCore

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

    /// Now, by the real clocks (CLOCK_MONOTONIC and CLOCK_REALTIME): the driver's default clock.
    public static func system() -> WorkerTime {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return WorkerTime(nanos: MonotonicTime.nanos(), wallMillis: Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000)
    }
}

/// Where a `WorkerDriver` reads the time: every reading it makes (the machines' events, its
/// waits, the metrics' pace, the heartbeat's times, the back-off's seed) comes from one
/// function given to it, so that a test or a tool can run a worker on another clock
/// (issue 34: the driver read the system clocks directly in five places).
public typealias WorkerClock = @Sendable () -> WorkerTime

