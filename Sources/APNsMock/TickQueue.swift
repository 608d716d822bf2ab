/// Items due at whole ticks (the mock uses milliseconds), kept in one bucket per tick: the
/// deadline order is paid per tick, not per item.
///
/// Delayed answers arrive by the tens of thousands per second, nearly all with the same delay,
/// so each millisecond's answers land in the bucket that was last opened (an append); a new
/// tick opens a bucket and pushes it on a small min-heap ordered by (tick, opening order). A
/// tick's items come out in the order they were added, across buckets too: items are only ever
/// appended to the newest bucket, so every item of an older bucket was added before any item
/// of a newer one. Time is never read here: callers pass the current tick, so tests drive it.
///
/// Bucket arrays are recycled with their capacity, so a steady load allocates nothing.
struct TickQueue<Item> {
    private struct Bucket {
        var tick: UInt64
        /// Opening order: breaks ties between buckets of the same tick (FIFO).
        var order: UInt64
        var items: [Item]
    }

    /// Live buckets and recycled ones, by slot.
    private var slots: [Bucket] = []
    private var freeSlots: [Int] = []
    /// Slots of live buckets, a min-heap by (tick, order).
    private var heap: [Int] = []
    /// The bucket items are appended to while they share its tick (-1: none).
    private var newest = -1
    private var nextOrder: UInt64 = 0

    /// Items waiting.
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    /// The earliest tick an item is due at (nil: empty).
    var nextTick: UInt64? { heap.first.map { slots[$0].tick } }

    /// Adds `item`, due at `tick`.
    mutating func insert(_ item: Item, tick: UInt64) {
        count += 1
        if newest >= 0, slots[newest].tick == tick {
            slots[newest].items.append(item)
            return
        }
        let slot: Int
        nextOrder += 1
        if let s = freeSlots.popLast() {
            slot = s
            slots[s].tick = tick
            slots[s].order = nextOrder
        } else {
            slot = slots.count
            slots.append(Bucket(tick: tick, order: nextOrder, items: []))
        }
        slots[slot].items.append(item)
        newest = slot
        heap.append(slot)
        siftUp(heap.count - 1)
    }

    /// Moves every item due at or before `now` to the end of `out`, earliest tick first and in
    /// insertion order within a tick. Returns how many were moved.
    @discardableResult
    mutating func takeDue(atOrBefore now: UInt64, into out: inout [Item]) -> Int {
        var moved = 0
        while let first = heap.first, slots[first].tick <= now {
            popHeap()
            moved += slots[first].items.count
            out.append(contentsOf: slots[first].items)
            slots[first].items.removeAll(keepingCapacity: true)
            freeSlots.append(first)
            if newest == first { newest = -1 }
        }
        count -= moved
        return moved
    }

    private func before(_ a: Int, _ b: Int) -> Bool {
        // Field by field: copying a Bucket would retain its array.
        let ta = slots[a].tick, tb = slots[b].tick
        return ta != tb ? ta < tb : slots[a].order < slots[b].order
    }

    private mutating func siftUp(_ start: Int) {
        var i = start
        while i > 0 {
            let parent = (i - 1) / 2
            guard before(heap[i], heap[parent]) else { break }
            heap.swapAt(i, parent)
            i = parent
        }
    }

    private mutating func popHeap() {
        let last = heap.removeLast()
        guard !heap.isEmpty else { return }
        heap[0] = last
        var i = 0
        while true {
            let l = 2 * i + 1, r = l + 1
            var m = i
            if l < heap.count, before(heap[l], heap[m]) { m = l }
            if r < heap.count, before(heap[r], heap[m]) { m = r }
            if m == i { break }
            heap.swapAt(i, m)
            i = m
        }
    }
}
