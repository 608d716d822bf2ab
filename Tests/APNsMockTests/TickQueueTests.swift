import Testing
@testable import APNsMock

/// The delayed answers' schedule without a network or a clock: ticks are passed in.
@Suite(.timeLimit(.minutes(1))) struct TickQueueTests {
    func drain(_ q: inout TickQueue<Int>, upTo tick: UInt64) -> [Int] {
        var out: [Int] = []
        q.takeDue(atOrBefore: tick, into: &out)
        return out
    }

    @Test("Nothing comes out before its tick; a tick's items come out together, in insertion order")
    func dueOrder() {
        var q = TickQueue<Int>()
        #expect(q.isEmpty && q.nextTick == nil)
        for i in 0..<5 { q.insert(i, tick: 10) }
        for i in 5..<8 { q.insert(i, tick: 11) }
        #expect(q.count == 8 && q.nextTick == 10)
        #expect(drain(&q, upTo: 9).isEmpty)
        #expect(q.count == 8)
        #expect(drain(&q, upTo: 10) == [0, 1, 2, 3, 4])
        #expect(q.nextTick == 11 && q.count == 3)
        #expect(drain(&q, upTo: 100) == [5, 6, 7])
        #expect(q.isEmpty && q.nextTick == nil)
    }

    @Test("Ticks out of order (the delay changed): earliest tick first, FIFO within a tick across buckets")
    func outOfOrder() {
        var q = TickQueue<Int>()
        q.insert(1, tick: 50)
        q.insert(2, tick: 20)   // a shorter delay: due earlier
        q.insert(3, tick: 50)   // same tick as 1, but a newer bucket
        q.insert(4, tick: 20)
        q.insert(5, tick: 35)
        #expect(q.nextTick == 20)
        #expect(drain(&q, upTo: 20) == [2, 4])
        #expect(drain(&q, upTo: 49) == [5])
        #expect(drain(&q, upTo: 50) == [1, 3])
        #expect(q.isEmpty)
    }

    @Test("One late drain takes every overdue tick in order")
    func lateDrain() {
        var q = TickQueue<Int>()
        var expected: [Int] = []
        for t in UInt64(0)..<100 {
            for k in 0..<3 {
                let v = Int(t) * 3 + k
                q.insert(v, tick: 1000 + t)
                expected.append(v)
            }
        }
        #expect(q.count == 300)
        #expect(drain(&q, upTo: 5000) == expected)
        #expect(q.isEmpty)
    }

    @Test("Buckets are recycled: a steady schedule keeps a bounded number of them")
    func steadyState() {
        var q = TickQueue<Int>()
        var out: [Int] = []
        var now: UInt64 = 0
        var next = 0
        var taken: [Int] = []
        // 50 items per tick, each due 20 ticks later, drained every tick (the mock at 50,000/s, 20 ms).
        for _ in 0..<1000 {
            now += 1
            for _ in 0..<50 {
                q.insert(next, tick: now + 20)
                next += 1
            }
            q.takeDue(atOrBefore: now, into: &out)
            taken.append(contentsOf: out)
            out.removeAll(keepingCapacity: true)
            #expect(q.count <= 21 * 50)
        }
        #expect(taken == Array(0..<taken.count))
        #expect(taken.count == 980 * 50)
        // Stopping drains everything at once (MockTimers.removeAll), then the queue is reusable.
        #expect(drain(&q, upTo: .max) == Array(taken.count..<(taken.count + 20 * 50)))
        #expect(q.isEmpty && q.nextTick == nil)
        q.insert(7, tick: 3)
        #expect(drain(&q, upTo: 3) == [7])
    }
}
