import Logging
import PushCore
import PushClientCore

/// The client for hosts that own a thread and need the library's full rate (a queue worker, a
/// benchmark, a sender loop): non-blocking submission of tagged batches with back-pressure, and
/// results taken on the host's own thread with a timeout. `APNsClient` (async/await) is built
/// on it.
///
/// One engine is one client: a pool of TLS + HTTP/2 connections driven by its own I/O
/// thread(s), a bounded set of slots (`pool.queueCapacity`: queued + in flight + results not
/// yet taken), every notification it took ending in exactly one result. Every method may be
/// called from any thread.
///
/// ```swift
/// let engine = try APNsEngine(configuration: configuration, logger: logger)
/// var results: [TaggedResult] = []
/// var next = batch[...]
/// while true {
///     next = next.dropFirst(engine.submit(next).accepted)       // never waits
///     switch engine.take(into: &results, timeout: .milliseconds(100)) {  // waits: host thread only
///     case .finished: return
///     default: handle(results); results.removeAll(keepingCapacity: true)
///     }
/// }
/// ```
///
/// `take`, `waitUntilConnected` and `close` block the calling thread: call them from a thread
/// of the host's, never from an async context (`APNsClient` is the async API).
public final class APNsEngine: Sendable {
    let group: PushClientGroup
    private let logger: Logger
    private let metrics: ResultMetrics
    /// Where the client connects (for messages).
    let endpoint: APNsEnvironment

    /// Opens the client: checks the configuration (`PushError` `.badOption`, `.key`, `.tls`),
    /// signs the first provider token and starts the I/O thread(s), which connect in the
    /// background (`waitUntilConnected` waits for the first connection). The library's log
    /// events go to `logger`.
    public init(configuration: APNsConfiguration, logger: Logger = Logger(label: "swiftpush")) throws(PushError) {
        var c = try configuration.clientConfiguration()
        c.callbacks.log = .forwarding(to: logger)
        do throws(ClientError) {
            group = try PushClientGroup(configuration: c)
        } catch {
            throw PushError(error)
        }
        self.logger = logger
        metrics = ResultMetrics(dimensions: configuration.metricsDimensions)
        endpoint = configuration.environment
        logger.debug("client opened", metadata: ["swiftpush.host": "\(endpoint.host)", "swiftpush.port": "\(endpoint.port)",
                                                 "swiftpush.connections": "\(c.pool.connections)"])
    }

    // MARK: - Submitting

    /// What a submission took.
    public struct Submission: Sendable {
        /// How many notifications of the batch, from its start, the client took: each gets
        /// exactly one result.
        public let accepted: Int
        /// Why the next one was not taken, nil when all were: `.queueFull` (no slot free: take
        /// results, then submit the rest), `.closed` (the engine is closing), or the rule
        /// notification `accepted` of the batch broke (`.badDeviceToken`, `.badTopic`...; it
        /// gets no result: leave it out and submit the rest).
        public let error: PushError?
    }

    /// Validates and takes the notifications of `batch`, in order, until one is invalid or no
    /// slot is free; never waits. One lock for the whole batch; each notification's bytes are
    /// copied once, into its slot (a payload shared by many notifications is not copied before).
    public func submit(_ batch: ArraySlice<TaggedNotification>) -> Submission {
        submit(TaggedBatch(items: batch), from: 0)
    }

    /// As `submit(_:)` for a whole array.
    public func submit(_ batch: [TaggedNotification]) -> Submission {
        submit(batch[...])
    }

    /// The send path of every Swift caller: `batch` from `start` on, without waiting.
    func submit(_ batch: some NotificationBatch, from start: Int) -> Submission {
        submit(batch, from: start, waitingUpTo: .zero)
    }

    /// As `submit(_:from:)`, waiting up to `timeout` for a free slot when none is: blocks the
    /// calling thread (a library thread's: `ResultRouter`'s feeder).
    func submit(_ batch: some NotificationBatch, from start: Int, waitingUpTo timeout: Duration) -> Submission {
        let r = group.send(batch, from: start, timeoutMillis: Self.millis(timeout))
        return Submission(accepted: r.accepted, error: r.error.map(PushError.init))
    }

    /// Ends FAILED Cancelled the notifications tagged within `tags` that are not written yet
    /// (a caller stopped waiting); their results still come, through `take`. Never waits.
    func cancelUnsent(tags: ClosedRange<UInt64>) {
        group.cancelUnsent(tags: tags)
    }

    /// Counts `count` notifications that were never handed to the client (a cancelled task's,
    /// still waiting for a slot) as FAILED Cancelled, as a result of the client's would be:
    /// in the metrics and the log. They get no result from `take`.
    func recordCancelledUnsubmitted(_ count: Int) {
        guard count > 0 else { return }
        let result = PushResult(outcome: .failed, status: 0, reason: .cancelled, detail: Self.cancelledText,
                                apnsID: APNsID(high: 0, low: 0), attempts: 0, latency: .zero)
        metrics.record(ArraySlice(repeatElement(TaggedResult(tag: 0, result: result), count: count)))
        logger.debug("notifications cancelled before they reached the client", metadata: ["swiftpush.count": "\(count)"])
    }

    /// The detail of a notification whose caller cancelled the wait before it was sent.
    static let cancelledText = "its caller cancelled the wait before it was sent"

    // MARK: - Taking results

    /// What a take found.
    public enum Take: Sendable, Equatable {
        /// This many results were appended.
        case results(Int)
        /// None came within the timeout.
        case timedOut
        /// The engine is closed and every result has been taken: none will come.
        case finished
    }

    /// Appends up to `max` results to `results`, waiting up to `timeout` for the first one
    /// (`.zero`: don't wait). Blocks the calling thread: call it from a thread of the host's,
    /// never from an async context. Several threads may take at once.
    public func take(into results: inout [TaggedResult], max: Int = 1024, timeout: Duration) -> Take {
        let first = results.count
        var reader = TaggedResultReader()
        swap(&reader.results, &results)
        let r = group.poll(max: Swift.max(max, 0), timeoutMillis: Self.millis(timeout), into: &reader)
        swap(&reader.results, &results)
        if r.count == 0 { return r.allDelivered ? .finished : .timedOut }
        let taken = results[first...]
        metrics.record(taken)
        if logger.logLevel <= .trace {
            for t in taken {
                logger.trace("result", metadata: ["swiftpush.apns-id": "\(t.result.apnsID)", "swiftpush.outcome": "\(t.result.outcome)",
                                                  "swiftpush.status": "\(t.result.status)", "swiftpush.reason": "\(t.result.reason?.text ?? "")"])
            }
        }
        return .results(r.count)
    }

    /// A descriptor that is readable while results wait, for a host's event loop (epoll):
    /// when it is readable, `take` with timeout `.zero` until it times out. Level-triggered;
    /// the engine owns it (don't read, write or close it). Cheap: one eventfd, made on first use.
    public func readinessDescriptor() throws(PushError) -> Int32 {
        do throws(ClientError) {
            return try group.resultFileDescriptor()
        } catch {
            throw PushError(error)
        }
    }

    // MARK: - Connecting, closing, figures

    /// Waits until every I/O thread has a connection open, for up to `timeout`. Fails at once
    /// for what retrying cannot fix (`.tls`: certificate, host name, ALPN) and with `.timeout`
    /// naming the last connection error. Blocks the calling thread.
    public func waitUntilConnected(timeout: Duration) throws(PushError) {
        if let e = group.waitUntilConnected(timeoutMillis: Self.millis(timeout)) { throw PushError(e) }
    }

    /// Stops taking notifications (`submit` then reports `.closed`), lets those in flight
    /// finish for up to `drain`, ends the rest FAILED (Cancelled, CancelledInFlight), closes
    /// the connections and joins the I/O thread(s). Their results stay takeable; `take` reports
    /// `.finished` once all were taken. Safe to call more than once and from several threads.
    /// Blocks the calling thread for up to `drain`.
    public func close(drain: Duration) {
        logger.debug("client closing", metadata: ["swiftpush.drain": "\(drain)"])
        group.close(drainMillis: Self.millis(drain))
    }

    /// Starts `close(drain:)` without waiting for it (`APNsClient.shutdown`, which awaits its
    /// last result instead); the next `close` joins the I/O threads.
    func close(startingOnly drain: Duration) {
        logger.debug("client closing", metadata: ["swiftpush.drain": "\(drain)"])
        group.beginClose(drainMillis: Self.millis(drain))
    }

    /// A snapshot of the client's counters, queues and latency.
    public func stats() -> APNsStats { APNsStats(group.stats()) }

    /// The client's counters in Prometheus text format (the C ABI's
    /// `push_client_metrics_text`), `labels` (e.g. `app="news"`, escaped) on every sample.
    public func prometheusText(labels: String = "") -> String { group.metricsText(labels: labels) }

    /// `duration` in whole milliseconds for the client's waits (negative: none; capped at
    /// Int32.max).
    static func millis(_ duration: Duration) -> Int32 {
        let ms = duration / .milliseconds(1)
        return ms <= 0 ? 0 : ms >= Double(Int32.max) ? .max : Int32(ms.rounded(.up))
    }
}

/// Appends each result a poll takes to `results`, as a Swift value.
private struct TaggedResultReader: ResultReader {
    var results: [TaggedResult] = []

    mutating func read(_ result: ResultView) {
        results.append(TaggedResult(tag: result.tag, result: PushResult(result)))
    }
}
