import SwiftPushStatus
import Testing

@Suite("StatsCounters", .timeLimit(.minutes(1)))
struct StatsCountersTests {
    @Test("The shard's, an app's and a campaign's counters are read from their field names")
    func fields() {
        let c = StatsCounters(fields: [
            ("enqueued", "1000"), ("accepted", "400"), ("rejected", "20"), ("failed", "5"),
            ("reason:Unregistered", "15"), ("reason:Timeout", "5"),
            ("app:demo:accepted", "400"), ("app:demo:rejected", "20"),
            ("campaign:spring:enqueued", "600"), ("campaign:spring:accepted", "300"), ("campaign:spring:reason:BadDeviceToken", "7"),
        ])
        #expect(c.total.enqueued == 1000 && c.total.accepted == 400 && c.total.rejected == 20 && c.total.failed == 5)
        #expect(c.total.done == 425 && c.total.reasons == ["Unregistered": 15, "Timeout": 5] && c.total.gone == 15)
        #expect(c.apps["demo"]?.accepted == 400 && c.apps["demo"]?.rejected == 20 && c.apps["demo"]?.enqueued == nil)
        #expect(c.campaigns["spring"]?.enqueued == 600 && c.campaigns["spring"]?.accepted == 300)
        #expect(c.campaigns["spring"]?.reasons == ["BadDeviceToken": 7])
    }

    @Test("Names holding colons are read from the end: kinds are lowercase, reasons capitalised")
    func colons() {
        let c = StatsCounters(fields: [
            ("campaign:2024:spring:accepted", "3"), ("campaign:x:reason:accepted", "4"),
            ("campaign:a:b:reason:Unregistered", "5"), ("app:tenant:7:failed", "6"),
        ])
        #expect(c.campaigns["2024:spring"]?.accepted == 3)
        // "x:reason" is a campaign's name here: "accepted" is a kind, never a reason.
        #expect(c.campaigns["x:reason"]?.accepted == 4)
        #expect(c.campaigns["a:b"]?.reasons == ["Unregistered": 5])
        #expect(c.apps["tenant:7"]?.failed == 6)
    }

    @Test("Fields that are not integers or that the table does not name are ignored, creating nothing")
    func unknownFields() {
        let c = StatsCounters(fields: [("accepted", "many"), ("bogus", "1"), ("app:demo:sent", "9"), ("campaign:c:latency", "3"),
                                       ("reason:", "1"), ("accepted", "2")])
        #expect(c.total.accepted == 2 && c.total.reasons.isEmpty && c.apps.isEmpty && c.campaigns.isEmpty && c.total.enqueued == nil)
    }

    @Test("Counts add up; enqueued stays known only when both sides knew it")
    func sums() {
        var a = OutcomeCounts()
        a.enqueued = 10; a.accepted = 5; a.reasons = ["Timeout": 1]
        var b = OutcomeCounts()
        b.enqueued = 20; b.rejected = 2; b.reasons = ["Timeout": 2, "Unregistered": 1]
        let sum = a + b
        #expect(sum.enqueued == 30 && sum.done == 7 && sum.reasons == ["Timeout": 3, "Unregistered": 1])
        b.enqueued = nil
        #expect((a + b).enqueued == nil)
    }
}
