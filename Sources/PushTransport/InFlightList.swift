/// A connection's streams in flight: their slots doubly linked through `Slot.prev` and
/// `Slot.next`, so that an answered stream leaves in O(1) wherever it is, and a dying
/// connection can account for every stream still on it. Holds no memory of its own.
struct InFlightList {
    /// The most recently linked slot (-1: none).
    private(set) var head: Int32 = -1
    /// No slot linked since the last deadline scan has an earlier deadline (a lower bound:
    /// answered streams leave it low); the scan skips the list while `now` is below it and
    /// sets it anew as it walks.
    var earliestDeadline: UInt64 = .max

    var isEmpty: Bool { head < 0 }

    /// Links `slot` (at `index` of `table`) at the front.
    mutating func link(_ index: Int32, _ slot: UnsafeMutablePointer<Slot>, in table: SlotTable) {
        earliestDeadline = min(earliestDeadline, slot.pointee.deadlineNanos)
        slot.pointee.prev = -1
        slot.pointee.next = head
        if head >= 0 { table[head].pointee.prev = index }
        head = index
    }

    /// Unlinks `slot` (at `index` of `table`), wherever it is, and clears its links.
    mutating func unlink(_ index: Int32, _ slot: UnsafeMutablePointer<Slot>, in table: SlotTable) {
        let p = slot.pointee.prev, n = slot.pointee.next
        if p >= 0 { table[p].pointee.next = n } else { head = n }
        if n >= 0 { table[n].pointee.prev = p }
        slot.pointee.prev = -1
        slot.pointee.next = -1
    }
}
