/// The I/O thread's time rules, as pure functions of "now" (the client clock's monotonic
/// nanoseconds, `ClientConfiguration.timing.clock`): health PINGs, connect timeouts, notification
/// deadlines and how long the loop may sleep. Kept apart from the loop so that each rule is
/// tested by moving a `ManualClock` (Tests/PushCoreTests/ClientTimersTests.swift) instead of by
/// waiting; the back-off and retry delays have their own pure rules (`ReconnectBackoff`,
/// `RetryPolicy`).
public struct ClientTimers: Sendable, Equatable {
    /// An idle connection gets a PING after this long without input (0: never).
    public let idlePingNanos: UInt64
    /// A PING unanswered this long retires its connection.
    public let pingTimeoutNanos: UInt64
    /// A connection attempt (name resolution, TCP, TLS, the server's SETTINGS) may take this long.
    public let connectTimeoutNanos: UInt64

    /// How often deadlines, connect timeouts and health are checked.
    public static let scanIntervalNanos: UInt64 = 50_000_000
    /// The longest the loop sleeps in one go, even with nothing due.
    public static let maxSleepMillis: Int32 = 1000

    /// From the options, in milliseconds (`PUSH_OPT_IDLE_PING_MS`, `PUSH_OPT_PING_TIMEOUT_MS`,
    /// `PUSH_OPT_CONNECT_TIMEOUT_MS`); a timeout below 1 ms counts as 1 ms.
    public init(idlePingMillis: Int, pingTimeoutMillis: Int, connectTimeoutMillis: Int) {
        idlePingNanos = UInt64(max(idlePingMillis, 0)) * 1_000_000
        pingTimeoutNanos = UInt64(max(pingTimeoutMillis, 1)) * 1_000_000
        connectTimeoutNanos = UInt64(max(connectTimeoutMillis, 1)) * 1_000_000
    }

    /// What a connection's health check calls for.
    public enum Health: Sendable, Equatable {
        /// Nothing: input arrived lately, or the PING sent is not overdue.
        case fine
        /// Idle longer than `idlePingNanos` with no PING outstanding: send one.
        case sendPing
        /// The PING sent at `pingSentNanos` went unanswered for longer than `pingTimeoutNanos`.
        case pingUnanswered
    }

    /// The health of a connection whose input last arrived at `lastInputNanos`, with a PING
    /// outstanding since `pingSentNanos` (0: none). Always `.fine` with PINGs off.
    public func health(now: UInt64, lastInputNanos: UInt64, pingSentNanos: UInt64) -> Health {
        guard idlePingNanos > 0 else { return .fine }
        if pingSentNanos != 0 {
            return Self.elapsed(now: now, since: pingSentNanos) > pingTimeoutNanos ? .pingUnanswered : .fine
        }
        return Self.elapsed(now: now, since: lastInputNanos) > idlePingNanos ? .sendPing : .fine
    }

    /// Whether an attempt started at `startedNanos` has taken longer than the connect timeout.
    public func connectTimedOut(now: UInt64, startedNanos: UInt64) -> Bool {
        Self.elapsed(now: now, since: startedNanos) > connectTimeoutNanos
    }

    /// Whether a deadline (a notification's, the drain's) has been reached.
    public static func isDue(_ deadline: UInt64, now: UInt64) -> Bool { now >= deadline }

    /// How long the loop may sleep at `now`: until the next scan, the next delayed retry
    /// (`nextRetryNanos`) or the next reconnect attempt (`nextReconnectNanos`, nil when no pool
    /// position is empty; one already past is left to the scan), at most `maxSleepMillis`.
    /// Rounded up, so that nothing is woken for before it is due.
    public static func sleepMillis(now: UInt64, nextScanNanos: UInt64, nextRetryNanos: UInt64?,
                                   nextReconnectNanos: UInt64?) -> Int32 {
        var until = nextScanNanos
        if let due = nextRetryNanos, due < until { until = due }
        if let next = nextReconnectNanos, next > now, next < until { until = next }
        guard until > now else { return 0 }
        return Int32(min((until - now + 999_999) / 1_000_000, UInt64(maxSleepMillis)))
    }

    /// `now - since`, or 0 when `since` is later (times taken on different threads).
    @inline(__always)
    static func elapsed(now: UInt64, since: UInt64) -> UInt64 { now > since ? now - since : 0 }
}
