import Foundation
@testable import SwiftPushWorker
@testable import SwiftPushWorkerMachine
@testable import SwiftPushWorkerRedis
import Testing
import SwiftPushKeys

/// The worker's lists that have one definition each (issue 34 item 3): its counters, its own
/// outcome reasons, its heartbeat, its log format; each held to its definition and to
/// docs/worker.md, which names them.
@Suite("Worker tables", .timeLimit(.minutes(1)))
struct WorkerTablesTests {
    static let doc: String = {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return (try? String(contentsOf: root.appendingPathComponent("docs/worker.md"), encoding: .utf8)) ?? ""
    }()

    /// The text of docs/worker.md between `from` and `to` (empty when either is missing).
    static func docText(from: String, to: String) -> Substring {
        guard let a = doc.range(of: from), let b = doc.range(of: to, range: a.upperBound..<doc.endIndex) else { return "" }
        return doc[a.lowerBound..<b.lowerBound]
    }

    /// The backticked words of `text` (`Name` -> Name).
    static func backticked(_ text: Substring) -> [String] {
        text.split(separator: "`", omittingEmptySubsequences: false).enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) }
    }

    @Test("The counter table has a row for every field of the counters, each named as the field in snake case")
    func counterTableCoversTheFields() {
        let fields = Mirror(reflecting: ShardMachine.Counters()).children.compactMap(\.label)
        let snake = fields.map { f in f.reduce(into: "") { s, c in if c.isUppercase { s += "_" + c.lowercased() } else { s.append(c) } } }
        #expect(ShardMachine.Counters.table.map(\.name) == snake)
    }

    @Test("Two machines' counters add field by field; each place shows the counters the table gives it")
    func countersAddAndShow() {
        var a = ShardMachine.Counters(), b = ShardMachine.Counters()
        for (k, row) in ShardMachine.Counters.table.enumerated() {
            a[keyPath: row.field] = k + 1
            b[keyPath: row.field] = 100 * (k + 1)
        }
        let sum = a + b
        for (k, row) in ShardMachine.Counters.table.enumerated() { #expect(sum[keyPath: row.field] == 101 * (k + 1), "\(row.name)") }
        #expect(sum.named(in: .heartbeat) == ["read": 101, "sent": 202, "accepted": 404, "rejected": 505, "failed": 606])
        #expect(ShardMachine.Counters.names(in: .page) == ["read", "sent", "resent", "reclaimed", "dead_lettered", "delayed", "redis_reconnects"])
        #expect(sum.logFields.count == ShardMachine.Counters.table.count && sum.logFields["handed_back"] == "1515")
    }

    @Test("docs/worker.md names the counters of /metrics and of the last log line as the table has them")
    func countersDocumented() {
        let metrics = Self.backticked(Self.docText(from: "counters `read`", to: "(`swiftpush_worker_<name>_total`)"))
        #expect(Set(metrics) == Set(ShardMachine.Counters.names(in: .metrics)))
        let log = Self.docText(from: "has every counter: ", to: ". The counters have one list").dropFirst("has every counter: ".count)
        #expect(log.split(separator: ",").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) } == ShardMachine.Counters.table.map(\.name))
    }

    @Test("Every worker reason is in docs/worker.md's list, which names no other; DeadLetter and Expired are FAILED, the rest REJECTED")
    func reasonsDocumented() {
        let listed = Self.backticked(Self.docText(from: "The worker's own reasons", to: "## Guarantees"))
            .filter { $0.first?.isUppercase == true && $0.allSatisfy(\.isLetter) && $0 != $0.uppercased() && $0 != "WorkerReason" }
        #expect(listed == WorkerReason.allCases.map(\.rawValue))
        #expect(WorkerReason.allCases.filter { $0.kind == .failed } == [.deadLetter, .expired])
        #expect(EntryRejection(.badField, "x").reason == "BadField")
    }

    @Test("A heartbeat encodes to the documented fields and decodes back whole")
    func heartbeatRoundTrip() throws {
        var h = Heartbeat(consumer: "w1")
        h.host = "a"; h.pid = 7; h.version = "1.0"; h.startedMillis = 5; h.heartbeatMillis = 9
        h.shards = ["0", "1"]; h.inFlight = 3; h.heldEntries = 2; h.counters = ["read": 4]
        let object = try #require(JSONSerialization.jsonObject(with: Data(h.json.utf8)) as? [String: Any])
        #expect(Set(object.keys) == ["consumer", "host", "pid", "version", "started_ms", "heartbeat_ms", "shards", "in_flight", "held_entries", "counters"])
        #expect(Heartbeat(field: "other", json: h.json) == h)
        #expect(Heartbeat(field: "w9", json: #"{"pid": "x", "in_flight": 2.0}"#) == { var e = Heartbeat(consumer: "w9"); e.inFlight = 2; return e }())
        #expect(Heartbeat(field: "w9", json: "[1]") == nil)
    }

    @Test("Log lines: logfmt, the time first in RFC 3339 UTC with milliseconds, fields sorted, values quoted when they must be")
    func logFormat() {
        #expect(WorkerLog.timestamp(seconds: 0, millis: 7) == "1970-01-01T00:00:00.007Z")
        #expect(WorkerLog.timestamp(seconds: 1_764_361_415, millis: 250) == "2025-11-28T20:23:35.250Z")
        #expect(WorkerLog.timestamp(seconds: 951_782_400, millis: 999) == "2000-02-29T00:00:00.999Z")
        #expect(WorkerLog.line(seconds: 0, millis: 0, level: "info", message: "worker started", ["streams": "push:{0}", "consumer": "w 1", "a": ""])
                == #"ts=1970-01-01T00:00:00.000Z level=info msg="worker started" a="" consumer="w 1" streams=push:{0}"#)
    }
}
