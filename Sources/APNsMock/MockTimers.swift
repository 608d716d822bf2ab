import PushCore

/// Answers waiting for `MockFaults.responseDelayMillis`, run by the server's loop (whose epoll
/// wait ends at the next due millisecond), so a delay never blocks the thread.
///
/// Scheduling is batched: answers are kept per millisecond tick in a `TickQueue`, and each tick
/// that comes due is sent as a batch. Every delayed answer still goes out in its own TLS record
/// (APNs's answers, spread out in time, arrive one per record, and a client's cost at real-world
/// latency depends on that), but a connection's answers of one tick are submitted together,
/// gathered from nghttp2 together, cut into one record per answer and reach the socket in one
/// write (`MockConnection.submitLater`, then `flush(recordPerAnswer:)`), instead of one
/// gather, `SSL_write` flush and `write` per answer: with those the mock, not the client, was
/// the ceiling of a latency benchmark.
final class MockTimers {
    struct Entry {
        let connection: MockConnection
        /// Unretained: the connection owns its streams for its whole life (`allStreams`), and
        /// the entry keeps the connection alive; `serial` tells whether it was reused.
        let stream: Unmanaged<MockStream>
        let serial: UInt64
    }

    static let nanosPerTick: UInt64 = 1_000_000

    private var queue = TickQueue<Entry>()
    /// Reused between ticks (no allocation per batch).
    private var due: [Entry] = []
    private var touched: [MockConnection] = []

    var isEmpty: Bool { queue.isEmpty }

    /// Answers `stream` on `connection` in `millis` milliseconds (at the first tick at or after
    /// that time: never early, at most a millisecond late).
    func schedule(afterMillis millis: Int, connection: MockConnection, stream: MockStream) {
        let dueNanos = MonotonicTime.nanos() + UInt64(max(0, millis)) * 1_000_000
        let tick = (dueNanos + Self.nanosPerTick - 1) / Self.nanosPerTick
        queue.insert(Entry(connection: connection, stream: .passUnretained(stream), serial: stream.serial), tick: tick)
    }

    /// How long the loop may wait for events before the next answer is due (-1: no limit).
    func waitMillis() -> Int32 {
        guard let tick = queue.nextTick else { return -1 }
        let dueNanos = tick * Self.nanosPerTick
        let now = MonotonicTime.nanos()
        if dueNanos <= now { return 0 }
        // Round up: waking a little late is fine, waking early only spins.
        return Int32(min((dueNanos - now + 999_999) / 1_000_000, 60_000))
    }

    /// Sends every answer that is due: submitted connection by connection, then one flush per
    /// connection that got any (one TLS record per answer, one socket write).
    func fireDue() {
        let now = MonotonicTime.nanos() / Self.nanosPerTick
        guard queue.takeDue(atOrBefore: now, into: &due) > 0 else { return }
        for e in due where e.connection.submitLater(e.stream.takeUnretainedValue(), serial: e.serial) {
            if !e.connection.flushPending {
                e.connection.flushPending = true
                touched.append(e.connection)
            }
        }
        due.removeAll(keepingCapacity: true)
        for c in touched {
            c.flushPending = false
            c.flush(recordPerAnswer: true)
        }
        touched.removeAll(keepingCapacity: true)
    }

    /// Forgets every pending answer (the server is stopping).
    func removeAll() {
        queue.removeAll()
        due.removeAll()
        touched.removeAll()
    }
}
