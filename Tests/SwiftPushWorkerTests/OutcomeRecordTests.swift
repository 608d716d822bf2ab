import SwiftPushWorker
import Testing
import SwiftPushKeys

@Suite("OutcomeRecord and StreamKeys", .timeLimit(.minutes(1)))
struct OutcomeRecordTests {
    @Test("A 410 outcome carries its timestamp and also goes to the unregistered stream")
    func gone() {
        var o = OutcomeRecord(id: "n-1", entryID: "5-0", kind: .rejected)
        o.status = 410
        o.reason = "Unregistered"
        o.token = "abcd"
        o.app = "demo"
        o.timestampMs = 1234
        #expect(o.tokenIsGone)
        let f = o.fields(worker: "w1")
        #expect(Array(f.prefix(4)) == ["v", "1", "id", "n-1"])
        #expect(f.contains("timestamp_ms") && f.contains("w1") && f.count % 2 == 0)
        #expect(o.unregisteredFields() == ["token", "abcd", "app", "demo", "id", "n-1", "reason", "Unregistered", "timestamp_ms", "1234"])
    }

    @Test("An accepted outcome has no 410 fields; maybe_delivered marks an unknown failure")
    func accepted() {
        var o = OutcomeRecord(id: "n-1", entryID: "5-0", kind: .accepted)
        o.status = 200
        #expect(!o.tokenIsGone && !o.fields(worker: "w").contains("timestamp_ms"))
        o.kind = .failed
        o.maybeDelivered = true
        #expect(o.fields(worker: "w").suffix(2) == ["maybe_delivered", "1"])
    }

    @Test("Every key of a shard carries its hash tag (one cluster slot per shard)")
    func keys() {
        let k = StreamKeys(shard: "7")
        for key in [k.stream, k.outcomes, k.unregistered, k.delayed, k.delayedEntryPrefix, k.guardPrefix, k.progress, k.stats, k.workers] {
            #expect(key.contains("{7}"))
        }
    }
}
