#if canImport(Glibc)
import Glibc
#endif
import CSwiftPushABI
import PushClientMachine
import PushCore
import Synchronization

/// A client with several I/O threads: one `PushClient` per thread ("shard"), each with its own
/// connections, slots and event loop, behind the same API. With one thread it is that client
/// and nothing more (every call goes straight through).
///
/// How the work is split, and why:
/// - Sends: each call goes whole to one shard, rotating, so a batch still costs one lock; a
///   shard that is full passes the rest to the next. A notification lives in exactly one shard,
///   so "one outcome each" holds per shard and so for the group.
/// - Connections and slots are divided between the shards (rounded up: each has at least one
///   connection and 16 slots).
/// - One provider token (JWT) for all, as APNs wants one per team and key.
/// - Results: poll drains the shards in turn and sleeps on one `ResultSignal` that every shard
///   pulses when it publishes; a result callback is called by one thread at a time (the shards
///   take turns through `SerializedCallback`), so callers see the single-thread contract.
/// - Close starts every shard's drain before waiting for any, so the drain time is shared.
public final class PushClientGroup: @unchecked Sendable {
    /// The I/O threads' clients.
    public let shards: [PushClient]
    private let signal: ResultSignal?
    private let serializedCallback: SerializedCallback?
    /// Where the next send and poll start (spreads load, and results, over the shards).
    private let nextSend = Atomic<Int>(0)
    private let nextPoll = Atomic<Int>(0)
    private let host: String
    private let port: Int

    /// Opens `configuration.pool.ioThreads` clients (1...16).
    public init(configuration: ClientConfiguration) throws(ClientError) {
        // The certificate is opened once here, not once per thread.
        let configuration = try configuration.resolvingCredentials()
        let threads = PushOption.ioThreads.clamped(configuration.pool.ioThreads)
        host = configuration.endpoint.host
        port = configuration.endpoint.port
        if threads == 1 {
            shards = [try PushClient(configuration: configuration)]
            signal = nil
            serializedCallback = nil
            return
        }
        var c = configuration
        c.pool.connections = (PushOption.connections.clamped(c.pool.connections) + threads - 1) / threads
        if c.pool.minConnections > 0 { c.pool.minConnections = (c.pool.minConnections + threads - 1) / threads }
        c.pool.queueCapacity = PushOption.queueCapacity.clamped((PushOption.queueCapacity.clamped(c.pool.queueCapacity) + threads - 1) / threads)
        let signal = ResultSignal()
        var serialized: SerializedCallback?
        if let callback = c.callbacks.result {
            let s = SerializedCallback(callback)
            serialized = s
            c.callbacks.result = s.asResultCallback
        }
        var opened: [PushClient] = []
        // One back-off for the client: every thread's core reports its changes to it.
        let schedule = ReconnectSchedule(firstDelayMillis: c.recovery.reconnectFirstDelayMillis, maxDelayMillis: c.recovery.reconnectMaxDelayMillis)
        do throws(ClientError) {
            for _ in 0..<threads {
                opened.append(try PushClient(configuration: c, sharedToken: opened.first?.token,
                                              sharedSchedule: schedule, resultSignal: signal,
                                              readiness: opened.first?.readiness))
            }
        } catch {
            for client in opened { client.close(drainMillis: 0) }
            throw error
        }
        shards = opened
        self.signal = signal
        serializedCallback = serialized
    }

    deinit {
        // A group dropped without close: its threads must stop before the callback wrapper
        // goes. (Dropped on one of its own threads, they cannot be joined: keep the wrapper.)
        if !close(drainMillis: 0), let serializedCallback { _ = Unmanaged.passRetained(serializedCallback) }
    }

    /// Whether the calling thread is one of the group's I/O threads (a result callback).
    public var isIOThread: Bool { shards.contains { $0.isIOThread } }

    // MARK: - Send

    /// As `PushClient.send`: queues a prefix of the batch and says why the rest was not.
    /// A full shard hands the rest to the next; when all are full, waits (in short turns on
    /// each, up to `timeoutMillis`). From a result callback it never waits.
    public func send(_ notifications: UnsafePointer<push_notification>, count: Int, timeoutMillis: Int32) -> PushClient.SendResult {
        send(notifications, count: count, timeoutMillis: timeoutMillis, stride: MemoryLayout<push_notification>.stride)
    }

    /// As `send(_:count:timeoutMillis:)` for records `stride` bytes apart.
    public func send(_ notifications: UnsafePointer<push_notification>, count: Int, timeoutMillis: Int32, stride: Int) -> PushClient.SendResult {
        send(CNotificationRecords(notifications, count: count, stride: stride), from: 0, timeoutMillis: timeoutMillis)
    }

    /// As `PushClient.send(_:from:timeoutMillis:)`, the send path of every caller: queues a
    /// prefix of `batch` from index `start` on and says why the rest was not. A full shard
    /// hands the rest to the next; when all are full, waits (in short turns on each, up to
    /// `timeoutMillis`). From a result callback it never waits.
    package func send<Batch: NotificationBatch>(_ batch: Batch, from start: Int, timeoutMillis: Int32) -> PushClient.SendResult {
        if shards.count == 1 { return shards[0].send(batch, from: start, timeoutMillis: timeoutMillis) }
        let timeoutMillis = isIOThread ? 0 : timeoutMillis
        let waitUntil: UInt64? = CallerDeadline.after(millis: timeoutMillis)
        var next = nextSend.wrappingAdd(1, ordering: .relaxed).oldValue % shards.count
        let count = batch.count - start
        var done = 0
        var fullInARow = 0
        while done < count {
            var turn: Int32 = 0
            if fullInARow >= shards.count {
                // Every shard is full: wait a little on one, then go round again.
                let now = CallerDeadline.now()
                if timeoutMillis == 0 || waitUntil.map({ now >= $0 }) == true {
                    let capacity = shards.reduce(0) { $0 + $1.slots.capacity }
                    return .init(accepted: done, error: ClientError(.queueFull,
                        "all \(capacity) slots of the \(shards.count) I/O threads are in use (queued, in flight or waiting to be polled)"))
                }
                turn = Int32(min(waitUntil.map { ($0 - now) / 1_000_000 + 1 } ?? 5, 5))
            }
            let r = shards[next].send(batch, from: start + done, timeoutMillis: turn)
            done += r.accepted
            guard let error = r.error else { break }
            guard error.status == .queueFull else { return .init(accepted: done, error: error) }
            fullInARow = r.accepted > 0 ? 1 : fullInARow + 1
            next = (next + 1) % shards.count
        }
        return .init(accepted: done, error: nil)
    }

    /// As `PushClient.cancelUnsent`, on every I/O thread (any of them may hold the tags).
    package func cancelUnsent(tags: ClosedRange<UInt64>) {
        for shard in shards { shard.cancelUnsent(tags: tags) }
    }

    // MARK: - Results

    /// As `PushClient.poll`, over every shard: up to `max` results, waiting up to
    /// `timeoutMillis` for the first; `allDelivered` once every shard has finished and been
    /// drained.
    public func poll(into out: UnsafeMutableRawPointer, max: Int, recordSize: Int, timeoutMillis: Int32) -> (count: Int, allDelivered: Bool) {
        var records = CResultRecords(out, recordSize: recordSize)
        return poll(max: max, timeoutMillis: timeoutMillis, into: &records)
    }

    /// As `PushClient.poll(max:timeoutMillis:_:)`, over every shard: the poll of every caller
    /// (the C records, the Swift API's values).
    package func poll<Reader: ResultReader>(max: Int, timeoutMillis: Int32, into reader: inout Reader) -> (count: Int, allDelivered: Bool) {
        guard let signal else { return shards[0].poll(max: max, timeoutMillis: timeoutMillis, into: &reader) }
        let waitUntil: UInt64? = CallerDeadline.after(millis: timeoutMillis)
        while true {
            // Read the signal's count first: a result published after a shard was looked at
            // changes it, and the wait below then returns at once.
            let seen = signal.count
            var n = 0
            var allDelivered = true
            let start = nextPoll.wrappingAdd(1, ordering: .relaxed).oldValue
            for k in 0..<shards.count where n < max {
                let r = shards[(start + k) % shards.count].poll(max: max - n, timeoutMillis: 0, into: &reader)
                n += r.count
                if !r.allDelivered { allDelivered = false }
            }
            if n > 0 || allDelivered || timeoutMillis == 0 || CallerDeadline.passed(waitUntil) {
                settleReadiness()
                return (n, n == 0 && allDelivered)
            }
            signal.wait(changedFrom: seen, untilMonotonicNanos: waitUntil)
        }
    }

    /// As `PushClient.takeStarted`, over every I/O thread's client.
    package func takeStarted() -> [UInt64] {
        var tags: [UInt64] = []
        for shard in shards { tags += shard.takeStarted() }
        return tags
    }

    // MARK: - Readiness, stats, close

    /// The client's figures in Prometheus text format (`ClientMetrics`), its I/O threads added
    /// together; `labels` (e.g. `app="news"`) are put on every sample.
    public func metricsText(labels: String = "") -> String {
        metrics().prometheusText(labels: labels)
    }

    /// The client's figures, its I/O threads added together (`ClientMetrics.prometheusText`
    /// renders several clients' on one page).
    public func metrics() -> ClientMetrics {
        var m = ClientMetrics()
        for shard in shards { m.add(shard.metrics()) }
        return m
    }

    /// A descriptor that is readable while results are waiting (`ResultReadiness`), for event
    /// loops; poll when it is, until poll returns nothing. Not with a result callback.
    public func resultFileDescriptor() throws(ClientError) -> Int32 {
        let fd = try shards[0].resultFileDescriptor()
        if signal != nil { settleReadiness() }
        return fd
    }

    /// After a poll: the descriptor stays readable only while some thread has results waiting.
    private func settleReadiness() {
        let readiness = shards[0].readiness
        guard readiness.inUse else { return }
        readiness.reset()
        if shards.contains(where: { $0.hasWaitingResults }) { readiness.signal() }
    }

    /// Waits until every I/O thread has an open connection (each takes its share of the
    /// sends); the first failure is returned. A `.timeout`'s message names `reportingMillis`
    /// as the timeout when given (a caller that waits in turns).
    public func waitUntilConnected(timeoutMillis: Int32, reportingMillis: Int32? = nil) -> ClientError? {
        let waitUntil: UInt64? = CallerDeadline.after(millis: timeoutMillis)
        for shard in shards {
            var left: Int32 = -1
            if let waitUntil {
                let now = CallerDeadline.now()
                left = now >= waitUntil ? 0 : Int32(min((waitUntil - now) / 1_000_000, UInt64(Int32.max)))
            }
            if let error = shard.waitUntilConnected(timeoutMillis: left, reportingMillis: reportingMillis ?? timeoutMillis) {
                if error.status == .timeout && shards.count > 1 {
                    return ClientError(.timeout, "not every I/O thread connected to \(host):\(port) within \(reportingMillis ?? timeoutMillis) ms: " + error.description)
                }
                return error
            }
        }
        return nil
    }

    /// The shards' stats added up: counters and queues summed, connections listed together
    /// (the first 64), latency percentiles from the merged histograms, the first non-empty
    /// GOAWAY reason and connection error.
    public func stats() -> push_stats {
        if shards.count == 1 { return shards[0].stats() }
        var total = push_stats()
        var latencies = LatencyHistogram()
        var connections: [push_connection_stats] = []
        for shard in shards {
            var s = shard.stats()
            latencies.merge(shard.latencySnapshot())
            for field in Self.summedCounters { total[keyPath: field] += s[keyPath: field] }
            for field in Self.summedConnectionCounts { total[keyPath: field] += s[keyPath: field] }
            if total.last_goaway_reason.0 == 0 { total.last_goaway_reason = s.last_goaway_reason }
            if total.last_connection_error.0 == 0 { total.last_connection_error = s.last_connection_error }
            withUnsafeBytes(of: &s.connections) { raw in
                connections += raw.bindMemory(to: push_connection_stats.self).prefix(Int(s.connection_count))
            }
        }
        total.struct_size = UInt32(MemoryLayout<push_stats>.size)
        total.latency_p50_us = latencies.percentile(0.5)
        total.latency_p99_us = latencies.percentile(0.99)
        let n = min(connections.count, 64)
        total.connection_count = UInt32(n)
        withUnsafeMutableBytes(of: &total.connections) { raw in
            let entries = raw.bindMemory(to: push_connection_stats.self)
            for i in 0..<n { entries[i] = connections[i] }
        }
        return total
    }

    /// The `push_stats` fields that add up over the I/O threads (immutable key paths, which
    /// Swift does not mark Sendable).
    nonisolated(unsafe) private static let summedCounters: [WritableKeyPath<push_stats, UInt64>] = [
        \.queued, \.in_flight, \.unpolled, \.sent, \.accepted, \.rejected, \.failed, \.retries, \.goaways,
        \.connections_started,
    ]
    nonisolated(unsafe) private static let summedConnectionCounts: [WritableKeyPath<push_stats, UInt32>] = [\.connections_open, \.connections_opening]

    /// As `PushClient.close`, for every I/O thread: all start draining at once, then each is
    /// waited for. False (nothing done) from a result callback.
    @discardableResult
    public func close(drainMillis: Int32) -> Bool {
        if isIOThread { return false }
        let started = shards.map { $0.startClosing(drainMillis: drainMillis) }
        for (shard, joining) in zip(shards, started) { shard.finishClosing(joining: joining) }
        return true
    }

    /// As `PushClient.beginClose` on every I/O thread: the close starts and nothing waits for
    /// it; the next `close` joins the threads (after the last result it returns at once).
    package func beginClose(drainMillis: Int32) {
        for shard in shards { shard.beginClose(drainMillis: drainMillis) }
    }
}

/// A counter that shards bump when they publish results, and pollers sleep on.
final class ResultSignal: @unchecked Sendable {
    private let lock = PThreadMutex()
    private var _count: UInt64 = 0
    private var waiters = 0

    /// How many times results were published (read before looking, compared when waiting).
    var count: UInt64 { lock.withLock { _count } }

    /// Results were published: wake whoever waits.
    func notify() {
        lock.lock()
        _count &+= 1
        if waiters > 0 { lock.broadcast() }
        lock.unlock()
    }

    /// Sleeps until the count moves past `seen` or the deadline passes.
    func wait(changedFrom seen: UInt64, untilMonotonicNanos deadline: UInt64?) {
        lock.lock()
        while _count == seen {
            if let deadline, CallerDeadline.now() >= deadline { break }
            waiters += 1
            _ = lock.wait(untilMonotonicNanos: deadline)
            waiters -= 1
        }
        lock.unlock()
    }
}

/// The caller's result callback, called by one I/O thread at a time: with several I/O threads
/// each would otherwise call it on its own, at the same time as the others.
final class SerializedCallback: @unchecked Sendable {
    private let callback: ResultCallback
    private let lock = PThreadMutex()

    init(_ callback: ResultCallback) { self.callback = callback }

    /// A callback that the shards call: it takes the lock and calls the caller's. Its user data
    /// points to `self`, unretained: the group keeps `self` alive, and closes its shards (whose
    /// threads are the only callers) before it goes.
    var asResultCallback: ResultCallback {
        ResultCallback(function: { context, results, count in
            let me = Unmanaged<SerializedCallback>.fromOpaque(context!).takeUnretainedValue()
            me.lock.withLock { me.callback.function(me.callback.userData, results, count) }
        }, userData: Unmanaged.passUnretained(self).toOpaque())
    }
}
