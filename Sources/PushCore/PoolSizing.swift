/// How many connections a self-sizing pool should hold, between a minimum and the configured
/// maximum (`PUSH_OPT_CONNECTIONS`). Pure: the client reports what it sees, with the time, at
/// every deadline scan; tests drive it with made-up numbers and times.
///
/// Why: one connection carries at most `streams / answer time` notifications a second (Little's
/// law: 1000 streams at 50 ms is 20,000/s), so the rate a pool reaches is set by its size and
/// APNs's distance, which the user rarely knows. The pool grows while it is the limit and
/// shrinks when it has been far from it for a while:
/// - **Grow** by one when notifications wait for a stream, every open connection has all its
///   streams in use, and no connection is still opening (the one opened last must come up
///   before another is judged necessary: one new connection per handshake time at most, and
///   each attempt goes through the reconnect back-off, so refusals cannot turn into a storm).
/// - **Shrink** by one when, over a whole window (`shrinkWindowNanos`, 60 s by default), the
///   peak demand (notifications in flight plus queued) stayed at or below half of what one
///   connection fewer could carry. The half is the hysteresis: a pool that just grew to carry
///   a load does not shrink while that load lasts, and shrinking never takes it back to the
///   edge of growing again.
public struct PoolSizing: Sendable, Equatable {
    /// The bounds: `1 <= minimum <= maximum`.
    public let minimum: Int
    public let maximum: Int
    /// How long demand must stay low before one connection goes.
    public let shrinkWindowNanos: UInt64
    /// The number of pool positions that should hold a connection.
    public private(set) var target: Int
    /// The peak demand seen since `windowStartNanos`.
    private var windowPeak = 0
    private var windowStartNanos: UInt64?

    /// What the client should do.
    public enum Decision: Sendable, Equatable {
        case keep
        /// Open a connection at position `target - 1` (the new target).
        case grow
        /// Retire the connection at position `target` (the old target minus one): it drains
        /// its streams and closes; the position stays empty.
        case shrink
    }

    /// What the client sees at one moment.
    public struct Observation: Sendable, Equatable {
        /// Connections ready for streams, and positions below the target still connecting (or
        /// waiting for the back-off).
        public var ready: Int
        public var opening: Int
        /// Free streams over the ready connections, and the stream limit of one connection
        /// (the server's MAX_CONCURRENT_STREAMS, capped by the client's).
        public var freeStreams: Int
        public var streamsPerConnection: Int
        /// Notifications waiting for a stream (not those waiting for a timed retry), and in flight.
        public var queued: Int
        public var inFlight: Int

        public init(ready: Int, opening: Int, freeStreams: Int, streamsPerConnection: Int, queued: Int, inFlight: Int) {
            self.ready = ready
            self.opening = opening
            self.freeStreams = freeStreams
            self.streamsPerConnection = streamsPerConnection
            self.queued = queued
            self.inFlight = inFlight
        }
    }

    /// A pool that starts at `minimum` connections (clamped to 1...maximum).
    public init(minimum: Int, maximum: Int, shrinkWindowNanos: UInt64 = 60_000_000_000) {
        self.maximum = max(maximum, 1)
        self.minimum = min(max(minimum, 1), self.maximum)
        self.shrinkWindowNanos = max(shrinkWindowNanos, 1)
        target = self.minimum
    }

    /// Takes one observation; returns what to change (at most one connection per call).
    public mutating func observe(_ o: Observation, now: UInt64) -> Decision {
        let demand = o.queued + o.inFlight
        if target < maximum && o.opening == 0 && o.ready >= target && o.queued > 0 && o.freeStreams == 0 {
            target += 1
            restartWindow(now: now, demand: demand)
            return .grow
        }
        guard let start = windowStartNanos else {
            restartWindow(now: now, demand: demand)
            return .keep
        }
        windowPeak = max(windowPeak, demand)
        guard now >= start && now - start >= shrinkWindowNanos else { return .keep }
        let peak = windowPeak
        restartWindow(now: now, demand: demand)
        if target > minimum && o.opening == 0 && peak * 2 <= (target - 1) * max(o.streamsPerConnection, 1) {
            target -= 1
            return .shrink
        }
        return .keep
    }

    private mutating func restartWindow(now: UInt64, demand: Int) {
        windowStartNanos = now
        windowPeak = demand
    }
}
