import PushCore
import SwiftPushWorkerMachine

/// Trouble on the way to APNs, logged as it happens instead of only in the counters of the
/// last line (which a SIGKILLed worker never writes): connections lost, GOAWAYs, back-off,
/// refused credentials, TLS and protocol failures. Rate-limited per app and kind of event: the
/// first event after a quiet interval is logged at once, the ones after it are counted and
/// logged together (`count`) once the interval has passed, so a storm costs one line per app
/// and kind per interval. Every event is also counted for `/metrics`
/// (`swiftpush_worker_apns_events_total{app,event}`).
///
/// Thread-safe: the clients' I/O threads report through their log callbacks (`AppEventSink`),
/// the loop reports the rest and flushes.
public final class APNsEventLog: @unchecked Sendable {
    /// A kind of event: its metric label and its log message (`APNsEventKind`, which the
    /// machine's actions name).
    public typealias Kind = APNsEventKind

    private struct Key: Hashable {
        let app: String
        let kind: Kind
    }

    private struct Tally {
        var total = 0
        /// Events since the last line.
        var unlogged = 0
        var lastLineNanos: UInt64?
        /// The last event's detail.
        var detail = ""
    }

    /// One line: `count` events of `kind` for `app` since its last line, `total` in all.
    struct Line: Equatable, Sendable {
        let kind: Kind
        let app: String
        let count: Int
        let total: Int
        /// The last event's text.
        let detail: String
    }

    /// At most one line per app and kind in this interval.
    let intervalNanos: UInt64
    private let emit: @Sendable (Line) -> Void
    private let clock: @Sendable () -> UInt64
    private let lock = PThreadMutex()
    private var tallies: [Key: Tally] = [:]

    /// An event log handing its lines to `emit`, one per app and kind per `intervalMillis` at
    /// most, timed by `clock` (monotonic ns).
    init(intervalMillis: Int, clock: @escaping @Sendable () -> UInt64, emit: @escaping @Sendable (Line) -> Void) {
        intervalNanos = UInt64(max(1, intervalMillis)) * 1_000_000
        self.clock = clock
        self.emit = emit
    }

    /// An event log writing warning lines to `log` (`event`, `count`, `total`, `interval_ms`,
    /// `last`), one per app and kind per `intervalMillis` at most, timed by `clock` (monotonic
    /// ns; the driver's `WorkerClock`).
    convenience init(log: WorkerLog, intervalMillis: Int = 5000, clock: @escaping @Sendable () -> UInt64 = { MonotonicTime.nanos() }) {
        let interval = intervalMillis
        self.init(intervalMillis: intervalMillis, clock: clock) { line in
            var fields = ["app": line.app, "event": line.kind.rawValue, "count": String(line.count), "total": String(line.total),
                          "interval_ms": String(interval)]
            if !line.detail.isEmpty { fields["last"] = line.detail }
            log.warning(line.kind.message, fields)
        }
    }

    /// `count` events of `kind` for `app`; `detail` is the last one's text (never a secret).
    /// Logged now if the app's last line of this kind is an interval old (or there was none).
    func note(_ kind: Kind, app: String, count: Int = 1, detail: String) {
        guard count > 0 else { return }
        let now = clock()
        let line: (Int, Int, String)? = lock.withLock {
            var t = tallies[Key(app: app, kind: kind), default: Tally()]
            t.total += count
            t.unlogged += count
            t.detail = detail
            var due: (Int, Int, String)?
            if t.lastLineNanos.map({ now &- $0 >= intervalNanos }) ?? true {
                due = (t.unlogged, t.total, t.detail)
                t.unlogged = 0
                t.lastLineNanos = now
            }
            tallies[Key(app: app, kind: kind)] = t
            return due
        }
        if let (n, total, text) = line { emit(Line(kind: kind, app: app, count: n, total: total, detail: text)) }
    }

    /// Logs what was counted since the last lines whose interval has passed (the loop calls it
    /// often; a line for events that came in a burst appears at most an interval after the first).
    func flush() {
        let now = clock()
        let lines: [(Key, Int, Int, String)] = lock.withLock {
            var due: [(Key, Int, Int, String)] = []
            for (key, t) in tallies where t.unlogged > 0 && t.lastLineNanos.map({ now &- $0 >= intervalNanos }) ?? true {
                due.append((key, t.unlogged, t.total, t.detail))
                tallies[key]!.unlogged = 0
                tallies[key]!.lastLineNanos = now
            }
            return due
        }
        for (key, n, total, text) in lines.sorted(by: { ($0.0.app, $0.0.kind.rawValue) < ($1.0.app, $1.0.kind.rawValue) }) {
            emit(Line(kind: key.kind, app: key.app, count: n, total: total, detail: text))
        }
    }

    /// Every event so far, by app and kind (for `/metrics`).
    func totals() -> [(app: String, kind: Kind, count: Int)] {
        lock.withLock { tallies.map { ($0.key.app, $0.key.kind, $0.value.total) } }
            .sorted { ($0.app, $0.kind.rawValue) < ($1.app, $1.kind.rawValue) }
    }

}
