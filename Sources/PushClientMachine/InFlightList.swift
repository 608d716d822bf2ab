/// A connection's streams in flight: their slots doubly linked through `Slot.links.prev` and
/// `Slot.links.next`, so that an answered stream leaves in O(1) wherever it is, and a dying
/// connection can account for every stream still on it. Holds no memory of its own.
package struct InFlightList {
    /// The most recently linked slot (-1: none).
    private(set) var head: Int32 = -1
    /// No slot linked since the last deadline scan has an earlier deadline (a lower bound:
    /// answered streams leave it low); the scan skips the list while `now` is below it and
    /// sets it anew as it walks.
    package var earliestDeadline: UInt64 = .max

    package var isEmpty: Bool { head < 0 }

    /// Links `slot` (at `index` of `table`) at the front.
    package mutating func link(_ index: Int32, _ slot: UnsafeMutablePointer<Slot>, in table: SlotTable) {
        earliestDeadline = min(earliestDeadline, slot.pointee.request.deadlineNanos)
        slot.pointee.links.prev = -1
        slot.pointee.links.next = head
        if head >= 0 { table[head].pointee.links.prev = index }
        head = index
    }

    /// Unlinks `slot` (at `index` of `table`), wherever it is, and clears its links.
    package mutating func unlink(_ index: Int32, _ slot: UnsafeMutablePointer<Slot>, in table: SlotTable) {
        let p = slot.pointee.links.prev, n = slot.pointee.links.next
        if p >= 0 { table[p].pointee.links.next = n } else { head = n }
        if n >= 0 { table[n].pointee.links.prev = p }
        slot.pointee.links.prev = -1
        slot.pointee.links.next = -1
    }
}
