import PushCore

/// The server's clock (`MockServer.Configuration.clock`: the system's, or a test's
/// `ManualClock`) as the I/O thread reads it. Every time the mock's logic uses comes from here:
/// token ages and token updates, the expire-tokens and refuse-connections faults, delayed
/// answers, the control interface's fault times.
///
/// The times requests are judged by are read at most once per input read: the requests that a
/// read completes are decided in microseconds, as if at the moment of the read, and a
/// connection streaming thousands of requests per read pays for one clock reading, not one per
/// request. `newInput()` forgets the reading; `monotonicNanos()` and `wallSeconds()` then take a
/// fresh one when first asked. The loop's own questions (when the next timer is due, which
/// timers are) take `currentMonotonicNanos()`, always fresh.
///
/// The I/O thread's alone (not thread-safe).
final class MockClock {
    /// The clock read.
    let source: any PushClock
    private var monotonic: UInt64 = 0
    private var monotonicRead = false
    private var wall: Int64 = 0
    private var wallRead = false

    /// Reads `source`.
    init(_ source: any PushClock) { self.source = source }

    /// New input arrived (or timers fired): the next question reads the clock again.
    @inline(__always)
    func newInput() {
        monotonicRead = false
        wallRead = false
    }

    /// Monotonic nanoseconds as of the current input (deadlines, delays, faults' "until").
    func monotonicNanos() -> UInt64 {
        if !monotonicRead {
            monotonic = source.monotonicNanos()
            monotonicRead = true
        }
        return monotonic
    }

    /// UNIX seconds as of the current input (a JWT's `iat`, token updates).
    func wallSeconds() -> Int64 {
        if !wallRead {
            wall = source.wallSeconds()
            wallRead = true
        }
        return wall
    }

    /// Monotonic nanoseconds now, whatever was read before.
    func currentMonotonicNanos() -> UInt64 { source.monotonicNanos() }
}
