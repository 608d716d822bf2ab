/// Answers waiting for `MockFaults.responseDelayMillis`, run by the server's loop (whose epoll
/// wait ends at the next due millisecond), so a delay never blocks the thread.
///
/// Scheduling is batched: answers are kept per millisecond tick in a `TickQueue`, and each tick
/// that comes due is sent as a batch. Every delayed answer still goes out in its own TLS record
/// (APNs's answers, spread out in time, arrive one per record, and a client's cost at real-world
/// latency depends on that), but a connection's answers of one tick are submitted together,
/// gathered from nghttp2 together, cut into one record per answer and reach the socket in one
/// write (`MockConnection.submitLater`, then `MockPump.flush(recordPerAnswer:)`), instead of
/// one gather, `SSL_write` flush and `write` per answer: with those the mock, not the client,
/// was the ceiling of a latency benchmark.
///
/// Time is the server's clock (`MockClock`): a delay counts from the input read that completed
/// the request (the clock's reading for that read), and a tick is due when the clock says so.
/// With a `ManualClock` the loop still waits in real time for the delay it computes, so it
/// notices a move of the clock within that.
final class MockTimers {
    /// One scheduled answer. Nothing in it is reference-counted, so scheduling, sorting and
    /// firing an answer retains and releases nothing per answer (with thousands of answers
    /// waiting, each one's refcount traffic was a cache miss on a connection or stream).
    ///
    /// Lifetime: the timers hold one strong reference to the pump of each connection that has
    /// answers scheduled, taken with its first (`MockPump.scheduledAnswers` 0 → 1) and given
    /// back with its last, so the pump, and the `connection` it owns, are alive while any entry
    /// names it. The connection owns its streams for its whole life (`MockStreamPool`), so
    /// `stream` is alive too; `serial` tells whether it was reused for another request meanwhile.
    ///
    /// `apnsId` is a copy of the stream's 36 apns-id bytes (`MockStream.apnsId`), written back
    /// just before the answer is submitted: entries are read in order, so the copy is in cache,
    /// and nghttp2 then encodes the header from a line just written instead of stalling on one
    /// last touched when the answer was decided, thousands of answers ago.
    struct Entry {
        let connection: Unmanaged<MockConnection>
        let stream: Unmanaged<MockStream>
        let serial: UInt64
        let apnsId: MockStream.ApnsIdBytes
    }

    static let nanosPerTick: UInt64 = 1_000_000

    private let clock: MockClock
    private var queue = TickQueue<Entry>()
    /// Reused between ticks (no allocation per batch).
    private var due: [Entry] = []
    private var touched: [MockPump] = []

    /// Timers on `clock`.
    init(clock: MockClock) { self.clock = clock }

    var isEmpty: Bool { queue.isEmpty }

    /// Answers `stream` on `connection` in `millis` milliseconds after the input read that
    /// completed its request (at the first tick at or after that time: never early, at most a
    /// millisecond late). The clock is read once per read, not once per answer.
    func schedule(afterMillis millis: Int, connection: MockConnection, stream: MockStream) {
        let dueNanos = clock.monotonicNanos() + UInt64(max(0, millis)) * 1_000_000
        let tick = (dueNanos + Self.nanosPerTick - 1) / Self.nanosPerTick
        let first = connection.withPump { pump in
            pump.scheduledAnswers += 1
            return pump.scheduledAnswers == 1
        }
        if first { _ = Unmanaged.passUnretained(connection.pump).retain() }
        queue.insert(Entry(connection: .passUnretained(connection), stream: .passUnretained(stream), serial: stream.serial,
                           apnsId: stream.apnsId.load(as: MockStream.ApnsIdBytes.self)),
                     tick: tick)
    }

    /// How long the loop may wait for events before the next answer is due (-1: no limit).
    func waitMillis() -> Int32 {
        guard let tick = queue.nextTick else { return -1 }
        let dueNanos = tick * Self.nanosPerTick
        let now = clock.currentMonotonicNanos()
        if dueNanos <= now { return 0 }
        // Round up: waking a little late is fine, waking early only spins.
        return Int32(min((dueNanos - now + 999_999) / 1_000_000, 60_000))
    }

    /// Sends every answer that is due: submitted connection by connection, then one flush per
    /// connection that got any (one TLS record per answer, one socket write).
    func fireDue() {
        // Answers decided after this (before the next read) count from a fresh reading.
        clock.newInput()
        let now = clock.monotonicNanos() / Self.nanosPerTick
        guard queue.takeDue(atOrBefore: now, into: &due) > 0 else { return }
        for e in due {
            e.connection._withUnsafeGuaranteedRef { c in
                let submitted = e.stream._withUnsafeGuaranteedRef { c.submitLater($0, serial: e.serial, apnsId: e.apnsId) }
                c.withPump { pump in
                    if submitted && !pump.flushPending {
                        // `touched` keeps the pump (and its connection) alive until its flush,
                        // past `release`.
                        pump.flushPending = true
                        touched.append(pump)
                    }
                }
            }
            release(e.connection)
        }
        due.removeAll(keepingCapacity: true)
        for pump in touched {
            pump.flushPending = false
            pump.flush(recordPerAnswer: true)
        }
        touched.removeAll(keepingCapacity: true)
    }

    /// Forgets every pending answer (the server is stopping), giving back the pumps.
    func removeAll() {
        queue.takeDue(atOrBefore: .max, into: &due)
        for e in due { release(e.connection) }
        due.removeAll()
        touched.removeAll()
    }

    /// One entry of `connection` is done with: the last one gives back the timers' reference
    /// to its pump (which may free both).
    private func release(_ connection: Unmanaged<MockConnection>) {
        let pump = connection._withUnsafeGuaranteedRef { Unmanaged.passUnretained($0.pump) }
        let last = pump._withUnsafeGuaranteedRef { p in
            p.scheduledAnswers -= 1
            return p.scheduledAnswers == 0
        }
        if last { pump.release() }
    }
}
