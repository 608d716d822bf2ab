@testable import SwiftPushWorker
@testable import SwiftPushWorkerMachine
@testable import SwiftPushWorkerRedis
import Testing

@Suite("SuspectPacer", .timeLimit(.minutes(1)))
struct SuspectPacerTests {
    let ms: UInt64 = 1_000_000

    func pacer(adding deliveries: [Int], app: String = "a") -> SuspectPacer {
        var p = SuspectPacer(maxGroup: 4, groupWaitNanos: 1000 * ms)
        for (i, d) in deliveries.enumerated() { p.add(tag: UInt64(i + 1), app: app, deliveries: d) }
        return p
    }

    @Test("Groups of 1, 1, 2, 4 ... up to the batch (each as large as those before it together), each only after the one before has its answers")
    func doubling() {
        var p = pacer(adding: Array(repeating: 1, count: 12))
        #expect(p.nextGroups(now: 0).map(\.tags) == [[1]])
        #expect(p.nextGroups(now: 1).isEmpty) // group 1 unanswered
        p.answered(tag: 1, app: "a")
        #expect(p.nextGroups(now: 2).map(\.tags) == [[2]])
        p.answered(tag: 2, app: "a")
        #expect(p.nextGroups(now: 3).map(\.tags) == [[3, 4]])
        p.answered(tag: 3, app: "a")
        #expect(p.nextGroups(now: 4).isEmpty) // 4 still out
        p.answered(tag: 4, app: "a")
        #expect(p.nextGroups(now: 5).map(\.tags) == [[5, 6, 7, 8]])
        for t: UInt64 in 5...8 { p.answered(tag: t, app: "a") }
        #expect(p.nextGroups(now: 6).map(\.tags) == [[9, 10, 11, 12]]) // capped at maxGroup
        #expect(p.outstandingCount == 4 && p.waitingCount == 0)
    }

    @Test("What an earlier life sent goes behind what it did not: a crash loop sends other entries at each life")
    func sentLast() {
        // Groups 1, 1, 2, 4 sent (8 entries); the life died with the last (4 entries) in flight.
        var next = SuspectPacer(maxGroup: 100, groupWaitNanos: 1000 * ms)
        for t: UInt64 in 1...4 { next.add(tag: t, app: "a", deliveries: 3) } // the group in flight, counted once more
        for t: UInt64 in 5...20 { next.add(tag: t, app: "a", deliveries: 1) }
        var sent: [[UInt64]] = []
        for step: UInt64 in 0..<3 {
            let g = next.nextGroups(now: step)[0].tags
            sent.append(g)
            for t in g { next.answered(tag: t, app: "a") }
        }
        #expect(sent == [[5], [6], [7, 8]])
    }

    @Test("A group unanswered for groupWait lets the next one go (an unanswered suspect holds the others back no longer)")
    func groupWait() {
        var p = pacer(adding: [1, 1, 1])
        #expect(p.nextGroups(now: 0).map(\.tags) == [[1]])
        #expect(p.nextGroups(now: 999 * ms).isEmpty)
        #expect(p.nextGroups(now: 1000 * ms).map(\.tags) == [[2]])
        p.answered(tag: 1, app: "a") // the late answer of the earlier group changes nothing
        #expect(p.outstandingCount == 1)
        #expect(p.nextGroups(now: 2000 * ms).map(\.tags) == [[3]])
    }

    @Test("The least delivered go first, then as they came")
    func leastDeliveredFirst() {
        var p = pacer(adding: [1, 3, 2, 3, 1])
        #expect(p.nextGroups(now: 0).map(\.tags) == [[1]])
        p.answered(tag: 1, app: "a")
        #expect(p.nextGroups(now: 1).map(\.tags) == [[5]])
        p.answered(tag: 5, app: "a")
        #expect(p.nextGroups(now: 2).map(\.tags) == [[3, 2]])
    }

    @Test("An entry on its last chance goes alone, and a group stops before one")
    func lastChanceAlone() {
        var p = SuspectPacer(maxGroup: 8, groupWaitNanos: 1000 * ms, lastChance: 4)
        for (i, d) in [1, 1, 1, 1, 4, 4, 1].enumerated() { p.add(tag: UInt64(i + 1), app: "a", deliveries: d) }
        var sent: [[UInt64]] = []
        while p.waitingCount > 0 {
            let g = p.nextGroups(now: 0)[0].tags
            sent.append(g)
            for t in g { p.answered(tag: t, app: "a") }
        }
        #expect(sent == [[1], [2], [3, 4], [7], [5], [6]])
    }

    @Test("Each app has its own groups: one app's unanswered suspects do not hold another's back")
    func perApp() {
        var p = SuspectPacer(maxGroup: 8, groupWaitNanos: 1000 * ms)
        p.add(tag: 1, app: "a", deliveries: 1)
        p.add(tag: 2, app: "a", deliveries: 1)
        p.add(tag: 3, app: "b", deliveries: 1)
        p.add(tag: 4, app: "b", deliveries: 1)
        #expect(p.nextGroups(now: 0).map { "\($0.app)\($0.tags)" } == ["a[1]", "b[3]"])
        p.answered(tag: 3, app: "b")
        #expect(p.nextGroups(now: 1).map { "\($0.app)\($0.tags)" } == ["b[4]"])
    }

    @Test("A group put back waits again; at a stop every waiting suspect is handed back; a later wave starts from one")
    func putBackAndStop() {
        var p = pacer(adding: [1, 1, 1])
        let g = p.nextGroups(now: 0)[0]
        p.putBack(app: "a", tags: g.tags) { _ in (1, 1) }
        #expect(p.outstandingCount == 0 && p.waitingCount == 3)
        #expect(Set(p.takeAllWaiting()) == [1, 2, 3])
        #expect(p.waitingCount == 0)
        var q = pacer(adding: [1, 1, 1, 1])
        for t: UInt64 in 1...4 {
            for group in q.nextGroups(now: t) { for tag in group.tags { q.answered(tag: tag, app: "a") } }
        }
        q.add(tag: 9, app: "a", deliveries: 1)
        q.add(tag: 10, app: "a", deliveries: 1)
        q.add(tag: 11, app: "a", deliveries: 1)
        #expect(q.nextGroups(now: 10).map(\.tags) == [[9]])
    }
}
