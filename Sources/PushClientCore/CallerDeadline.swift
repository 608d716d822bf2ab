import PushClientMachine
import PushCore

/// Deadlines of the caller's own blocking calls (send waiting for room, poll,
/// waitUntilConnected, close joining the I/O threads) and the time a result callback takes.
/// These are real time (CLOCK_MONOTONIC), not the client's injected clock: the caller sleeps on
/// a condition variable (`PThreadMutex.wait(untilMonotonicNanos:)`) whose timeout the kernel
/// measures, and a callback's duration is what the I/O thread really lost. Everything the
/// client decides (notification deadlines, retry delays, back-off, PINGs, reconnects, connect
/// timeouts) reads `ClientConfiguration.timing.clock`.
enum CallerDeadline {
    /// Now, in real time.
    @inline(__always)
    static func now() -> UInt64 { MonotonicTime.nanos() }

    /// When a wait of `timeoutMillis` ends; nil for a negative timeout (no limit).
    static func after(millis timeoutMillis: Int32) -> UInt64? {
        timeoutMillis < 0 ? nil : now() + UInt64(timeoutMillis) * 1_000_000
    }

    /// Whether `deadline` (from `after`) has passed; never for nil.
    static func passed(_ deadline: UInt64?) -> Bool {
        deadline.map { now() >= $0 } ?? false
    }
}
