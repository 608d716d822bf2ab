import Testing
@testable import PushClientCore
@testable import PushClientMachine

/// The slot table (chunked, created on demand, bounded) and the index lists threaded through it:
/// the FIFO queues (`SlotList`) and a connection's streams in flight (`InFlightList`).
@Suite("Slot table and lists", .timeLimit(.minutes(1)))
struct SlotTableTests {
    /// The indices of `list`, front to back.
    func contents(_ list: SlotList, _ table: SlotTable) -> [Int32] {
        var out: [Int32] = []
        var i = list.head
        while i >= 0 { out.append(i); i = table[i].pointee.links.next }
        return out
    }

    @Test("Slots are created on demand across chunks up to the capacity, then -1; each keeps its own state")
    func creation() {
        let table = SlotTable(capacity: 2500)
        var indices: [Int32] = []
        for _ in 0..<2500 { indices.append(table.create()) }
        #expect(indices == (0..<2500).map(Int32.init))
        #expect(table.create() == -1, "capacity reached")
        for i in [Int32(0), 1023, 1024, 2499] { table[i].pointee.request.tag = UInt64(i) * 7 }
        for i in [Int32(0), 1023, 1024, 2499] { #expect(table[i].pointee.request.tag == UInt64(i) * 7) }
        #expect(table[5].pointee.links.next == -1 && table[5].pointee.storage.buffer == nil)
    }

    @Test("A slot stays 168 bytes: its groups pack as tightly as the flat fields did (176 before)")
    func compactLayout() {
        // Thousands of slots are walked by the deadline scans and the queues: a regrouping
        // that adds padding costs cache lines on the hot path.
        #expect(MemoryLayout<Slot>.stride <= 168)
    }

    @Test("reserve grows a slot's buffer to a rounded size and never shrinks it")
    func reserve() {
        let table = SlotTable(capacity: 16)
        let slot = table[table.create()]
        #expect(SlotTable.reserve(slot, bytes: 10))
        #expect(slot.pointee.storage.capacity == 1024)
        #expect(SlotTable.reserve(slot, bytes: 1500))
        #expect(slot.pointee.storage.capacity == 1536)
        #expect(SlotTable.reserve(slot, bytes: 100))
        #expect(slot.pointee.storage.capacity == 1536, "never shrinks")
    }

    @Test("A list is a FIFO: append, prepend, popFirst, count; splice moves a whole list in O(1) and empties it")
    func lists() {
        let table = SlotTable(capacity: 64)
        for _ in 0..<10 { _ = table.create() }
        var a = SlotList()
        #expect(a.isEmpty && a.popFirst(in: table) == -1)
        for i in Int32(0)..<4 { a.append(i, in: table) }
        a.prepend(9, in: table)
        #expect(contents(a, table) == [9, 0, 1, 2, 3] && a.count == 5)
        #expect(a.popFirst(in: table) == 9 && a.count == 4)
        var b = SlotList()
        b.append(5, in: table)
        b.append(6, in: table)
        a.splice(&b, in: table)
        #expect(b.isEmpty && b.count == 0)
        #expect(contents(a, table) == [0, 1, 2, 3, 5, 6] && a.count == 6)
        var empty = SlotList()
        a.splice(&empty, in: table)
        #expect(a.count == 6, "splicing an empty list changes nothing")
        var c = SlotList()
        c.splice(&a, in: table)
        #expect(contents(c, table) == [0, 1, 2, 3, 5, 6] && a.isEmpty)
        while c.popFirst(in: table) >= 0 {}
        #expect(c.isEmpty && c.tail == -1 && c.count == 0)
        c.prepend(7, in: table)
        #expect(contents(c, table) == [7] && c.tail == 7, "prepend onto an empty list sets its tail")
    }

    @Test("A list's earliest deadline is exact while slots are added (append, prepend, splice) and a lower bound after removals")
    func earliestDeadline() {
        let table = SlotTable(capacity: 8)
        for _ in 0..<6 { _ = table.create() }
        for (i, d) in [UInt64(50), 20, 70, 10, 90, 30].enumerated() { table[Int32(i)].pointee.request.deadlineNanos = d }
        var a = SlotList()
        #expect(a.earliestDeadline == .max, "empty: nothing can be due")
        a.append(0, in: table)
        a.append(2, in: table)
        #expect(a.earliestDeadline == 50)
        a.prepend(1, in: table)
        #expect(a.earliestDeadline == 20)
        var b = SlotList()
        b.append(3, in: table)
        b.append(4, in: table)
        a.splice(&b, in: table)
        #expect(a.earliestDeadline == 10)
        #expect(b.earliestDeadline == .max)
        // Removing the earliest leaves the bound low (never above a deadline still queued)...
        #expect(a.popFirst(in: table) == 1)
        #expect(a.earliestDeadline <= 10)
        // ...and rebuilding the list, as the deadline scan does, makes it exact again.
        var kept = SlotList()
        while true {
            let i = a.popFirst(in: table)
            if i < 0 { break }
            if i != 3 { kept.append(i, in: table) }
        }
        #expect(contents(kept, table) == [0, 2, 4])
        #expect(kept.earliestDeadline == 50)
    }

    /// The indices of an in-flight list, front to back, checking each back link on the way.
    func contents(_ list: InFlightList, _ table: SlotTable) -> [Int32] {
        var out: [Int32] = []
        var previous: Int32 = -1
        var i = list.head
        while i >= 0 {
            #expect(table[i].pointee.links.prev == previous, "back link of \(i)")
            out.append(i)
            previous = i
            i = table[i].pointee.links.next
        }
        return out
    }

    @Test("An in-flight list links at the front and unlinks from anywhere (front, middle, back, last) in O(1), clearing the links")
    func inFlightLinks() {
        let table = SlotTable(capacity: 8)
        for _ in 0..<5 { _ = table.create() }
        var list = InFlightList()
        #expect(list.isEmpty && list.head == -1)
        for i in Int32(0)..<5 { list.link(i, table[i], in: table) }
        #expect(contents(list, table) == [4, 3, 2, 1, 0])
        list.unlink(2, table[2], in: table)
        #expect(contents(list, table) == [4, 3, 1, 0], "middle")
        #expect(table[2].pointee.links.prev == -1 && table[2].pointee.links.next == -1)
        list.unlink(4, table[4], in: table)
        #expect(contents(list, table) == [3, 1, 0], "front")
        list.unlink(0, table[0], in: table)
        #expect(contents(list, table) == [3, 1], "back")
        list.link(2, table[2], in: table)
        #expect(contents(list, table) == [2, 3, 1], "a slot unlinked before links again")
        for i: Int32 in [3, 1, 2] { list.unlink(i, table[i], in: table) }
        #expect(list.isEmpty && list.head == -1, "the last one empties it")
    }

    @Test("An in-flight list's earliest deadline is the minimum of what was linked, and stays a lower bound after unlinks")
    func inFlightEarliestDeadline() {
        let table = SlotTable(capacity: 4)
        for _ in 0..<3 { _ = table.create() }
        for (i, d) in [UInt64(40), 10, 30].enumerated() { table[Int32(i)].pointee.request.deadlineNanos = d }
        var list = InFlightList()
        #expect(list.earliestDeadline == .max, "empty: nothing can be due")
        list.link(0, table[0], in: table)
        #expect(list.earliestDeadline == 40)
        list.link(1, table[1], in: table)
        list.link(2, table[2], in: table)
        #expect(list.earliestDeadline == 10)
        list.unlink(1, table[1], in: table)
        #expect(list.earliestDeadline <= 30, "a lower bound: never above a deadline still linked")
    }
}
