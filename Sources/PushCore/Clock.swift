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

/// A clock that moves only when told to: for tests of the time rules (token refresh,
/// deadlines, back-off, PINGs) that move time instead of waiting for it. A client given one
/// (`ClientConfiguration.timing.clock`) decides by it alone; its I/O thread still wakes at least
/// every `ClientTimers.scanIntervalNanos` of real time, so it notices a move within that.
public final class ManualClock: PushClock, @unchecked Sendable {
    private let lock = PThreadMutex()
    private let wallStart: Int64
    private var mono: UInt64

    /// Starts at `wallSeconds` (UNIX seconds) with the monotonic clock at 0.
    public init(wallSeconds: Int64) {
        self.wallStart = wallSeconds
        self.mono = 0
    }

    /// Moves both clocks forward.
    public func advance(seconds: Int64) {
        advance(nanos: UInt64(seconds) * 1_000_000_000)
    }

    /// Moves both clocks forward (the wall clock by the whole seconds passed in all).
    public func advance(millis: Int) {
        advance(nanos: UInt64(millis) * 1_000_000)
    }

    /// Moves both clocks forward by `nanos`.
    public func advance(nanos: UInt64) {
        lock.withLock { mono += nanos }
    }

    public func wallSeconds() -> Int64 { lock.withLock { wallStart + Int64(mono / 1_000_000_000) } }
    public func monotonicNanos() -> UInt64 { lock.withLock { mono } }
}
