import Foundation
@testable import SwiftPushWorker
@testable import SwiftPushWorkerMachine
@testable import SwiftPushWorkerRedis
import Testing

/// Outcome format 2: one JSON object per outcome in a batch entry, holding exactly format 1's
/// fields but the entry-level `v` and `worker`.
@Suite("Outcome format 2", .timeLimit(.minutes(1)))
struct OutcomeFormatTests {
    /// Format 1's fields as format 2's object should hold them: without v and worker, numbers
    /// as numbers.
    func expected(_ o: OutcomeRecord) -> [String: AnyHashable] {
        let f = o.fields(worker: "w1")
        var out: [String: AnyHashable] = [:]
        for i in stride(from: 0, to: f.count, by: 2) where f[i] != "v" && f[i] != "worker" {
            out[f[i]] = OutcomeRecord.numericFields.contains(f[i]) ? AnyHashable(Int64(f[i + 1])!) : AnyHashable(f[i + 1])
        }
        return out
    }

    /// `o.json()` parsed back.
    func parsed(_ o: OutcomeRecord) throws -> [String: AnyHashable] {
        let object = try JSONSerialization.jsonObject(with: Data(o.json())) as? [String: Any] ?? [:]
        return object.mapValues { v in (v as? NSNumber).map { AnyHashable($0.int64Value) } ?? AnyHashable("\(v)") }
    }

    @Test("Each kind of outcome's object holds format 1's fields, texts escaped, numbers as numbers")
    func sameFields() throws {
        var sent = OutcomeRecord(id: "n-1", entryID: "17-3", kind: .accepted)
        (sent.status, sent.app, sent.token, sent.apnsID) = (200, "demo", "00ff", "5b0f3f1e-8c53-4b8e-9d6a-2f1c7a4e9b30")
        (sent.attempts, sent.deliveries, sent.latencyUs) = (2, 3, 1234)
        var gone = sent
        (gone.kind, gone.status, gone.reason, gone.timestampMs) = (.rejected, 410, "Unregistered", 1_700_000_000_000)
        var odd = OutcomeRecord(id: #"q"u\o\te"#, entryID: "17-4", kind: .failed)
        (odd.reason, odd.detail, odd.maybeDelivered) = ("Timeout", "line\none\ttab \u{1} \u{2028} é", true)
        let bare = OutcomeRecord(id: "", entryID: "17-5", kind: .rejected)
        for o in [sent, gone, odd, bare] {
            #expect(try parsed(o) == expected(o))
        }
    }

    @Test("outcome_format must be 1, 2 or 3")
    func configuration() throws {
        let app = #""apps": {"demo": {"key_file": "k.p8", "key_id": "K", "team_id": "T"}}"#
        let two = try JSONDecoder().decode(WorkerConfiguration.self, from: Data((#"{"outcome_format": 2, "# + app + "}").utf8))
        #expect(two.machineSettings.outcomeFormat == 2)
        try two.check()
        try JSONDecoder().decode(WorkerConfiguration.self, from: Data((#"{"outcome_format": 3, "# + app + "}").utf8)).check()
        let four = try JSONDecoder().decode(WorkerConfiguration.self, from: Data((#"{"outcome_format": 4, "# + app + "}").utf8))
        #expect(throws: ConfigurationError.self) { try four.check() }
        #expect(try JSONDecoder().decode(WorkerConfiguration.self, from: Data(("{" + app + "}").utf8)).machineSettings.outcomeFormat == 1)
    }
}
