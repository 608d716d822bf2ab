#if canImport(Glibc)
import Glibc
#endif

/// Time as the library sees it. Token refresh rules read `wallSeconds`; deadlines and latencies
/// read `monotonicNanos`. Tests substitute a `ManualClock` to move time without waiting.
public protocol PushClock: AnyObject, Sendable {
    /// Seconds since the UNIX epoch (JWT `iat`).
    func wallSeconds() -> Int64
    /// A monotonic time in nanoseconds, for deadlines and latencies.
    func monotonicNanos() -> UInt64
}

/// The real clocks: CLOCK_REALTIME and CLOCK_MONOTONIC.
public final class SystemClock: PushClock {
    /// The shared instance.
    public static let shared = SystemClock()
    public init() {}
    public func wallSeconds() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec)
    }
    public func monotonicNanos() -> UInt64 { MonotonicTime.nanos() }
}

/// Reads CLOCK_MONOTONIC without going through a protocol (hot paths).
public enum MonotonicTime {
    /// Nanoseconds on CLOCK_MONOTONIC.
    @inline(__always)
    public static func nanos() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
    }
}

/// A clock that moves only when told to: for tests of the token refresh rules.
public final class ManualClock: PushClock, @unchecked Sendable {
    private let lock = PThreadMutex()
    private var wall: Int64
    private var mono: UInt64

    /// Starts at `wallSeconds` (UNIX seconds) with the monotonic clock at 0.
    public init(wallSeconds: Int64) {
        self.wall = wallSeconds
        self.mono = 0
    }

    /// Moves both clocks forward.
    public func advance(seconds: Int64) {
        lock.withLock {
            wall += seconds
            mono += UInt64(seconds) * 1_000_000_000
        }
    }

    public func wallSeconds() -> Int64 { lock.withLock { wall } }
    public func monotonicNanos() -> UInt64 { lock.withLock { mono } }
}
