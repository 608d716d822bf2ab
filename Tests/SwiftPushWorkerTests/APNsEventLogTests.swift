import Synchronization
@testable import SwiftPushWorker
@testable import SwiftPushWorkerMachine
@testable import SwiftPushWorkerRedis
import Testing

@Suite("APNsEventLog", .timeLimit(.minutes(1)))
struct APNsEventLogTests {
    /// The test's clock and the lines the log emitted.
    final class Recorder: Sendable {
        let now = Atomic<UInt64>(0)
        let lines = Mutex<[String]>([])
        func advance(millis: UInt64) { now.add(millis * 1_000_000, ordering: .relaxed) }
        func take() -> [String] { lines.withLock { l in defer { l.removeAll() }; return l } }
    }

    func eventLog(_ r: Recorder) -> APNsEventLog {
        APNsEventLog(intervalMillis: 1000, clock: { r.now.load(ordering: .relaxed) }) { line in
            r.lines.withLock { $0.append("\(line.app) \(line.kind.rawValue) count=\(line.count) total=\(line.total) \(line.detail)") }
        }
    }

    @Test("The first event after a quiet interval is a line at once; the interval's others are one later line with their count")
    func rateLimited() {
        let r = Recorder()
        let log = eventLog(r)
        log.note(.goaway, app: "a", detail: "Shutdown")
        log.note(.goaway, app: "a", count: 3, detail: "MaxRequests")
        log.note(.connectionLost, app: "a", detail: "eof")
        log.note(.goaway, app: "b", detail: "x")
        #expect(r.take() == ["a goaway count=1 total=1 Shutdown", "a connection_lost count=1 total=1 eof", "b goaway count=1 total=1 x"])
        log.flush()
        #expect(r.take().isEmpty) // the interval has not passed
        r.advance(millis: 999)
        log.flush()
        #expect(r.take().isEmpty)
        r.advance(millis: 1)
        log.flush()
        #expect(r.take() == ["a goaway count=3 total=4 MaxRequests"])
        log.flush()
        #expect(r.take().isEmpty)
        log.note(.goaway, app: "a", detail: "Shutdown") // within the interval of the flushed line: counted, not logged
        #expect(r.take().isEmpty)
        r.advance(millis: 5000)
        log.note(.goaway, app: "a", detail: "Shutdown") // a quiet interval later: at once, with the one waiting
        #expect(r.take() == ["a goaway count=2 total=6 Shutdown"])
    }

    @Test("Totals keep every event, by app and kind, for /metrics")
    func totals() {
        let r = Recorder()
        let log = eventLog(r)
        log.note(.backOff, app: "b", detail: "")
        log.note(.goaway, app: "a", count: 4, detail: "")
        log.note(.goaway, app: "a", detail: "")
        log.note(.goaway, app: "a", count: 0, detail: "") // nothing
        #expect(log.totals().map { "\($0.app) \($0.kind.rawValue) \($0.count)" } == ["a goaway 5", "b back_off 1"])
    }
}
