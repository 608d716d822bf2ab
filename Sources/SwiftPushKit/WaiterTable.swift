/// `ResultRouter`'s waiters by id: a table indexed by `id & mask` (open addressing, linear
/// probing, removed entries left as tombstones), in place of a `Dictionary`. The router hands
/// ids out in order, so the waiters alive at once have nearly consecutive ids and land in
/// consecutive slots, and a new id's slot is mostly one a waiter left long ago: a look-up is an
/// index and a compare, where a `Dictionary<UInt64, _>` hashed every id with SipHash (about
/// 260 of the ~450 instructions a waiter cost there; callgrind, per notification with 1,000
/// tasks each awaiting `send`). (Removal by shifting entries back instead of tombstones cost
/// ~10,000 instructions a removal here: the oldest waiter, removed first, heads a run of every
/// waiter alive, which the shift walks to its end.) Ids 0 and `UInt64.max` are never used
/// (they mark an empty slot and a tombstone).
struct WaiterTable<Value> {
    private static var empty: UInt64 { 0 }
    private static var removed: UInt64 { .max }

    private var ids: [UInt64]
    private var values: [Value?]
    private var mask: Int
    /// Live entries.
    private(set) var count = 0
    /// Tombstones: slots a look-up walks past, an insertion may take.
    private var tombstones = 0

    init(capacity: Int = 1024) {
        var size = 16
        while size < capacity * 2 { size *= 2 }
        ids = Array(repeating: Self.empty, count: size)
        values = Array(repeating: nil, count: size)
        mask = size - 1
    }

    /// The slot that holds `id`, if it is in the table.
    func slot(of id: UInt64) -> Int? {
        var i = Int(truncatingIfNeeded: id) & mask
        while true {
            let here = ids[i]
            if here == id { return i }
            if here == Self.empty { return nil }
            i = (i + 1) & mask
        }
    }

    /// The value in `slot` (from `slot(of:)`).
    func value(at slot: Int) -> Value { values[slot]! }

    /// Replaces the value in `slot` (from `slot(of:)`).
    mutating func setValue(_ value: Value, at slot: Int) { values[slot] = value }

    /// Removes the entry in `slot` (from `slot(of:)`).
    mutating func remove(at slot: Int) {
        ids[slot] = Self.removed
        values[slot] = nil
        count -= 1
        tombstones += 1
    }

    /// The value for `id`; setting nil removes it.
    subscript(id: UInt64) -> Value? {
        get { slot(of: id).map { values[$0]! } }
        set {
            precondition(id != Self.empty && id != Self.removed, "waiter ids 0 and UInt64.max mark free slots")
            if let slot = slot(of: id) {
                if let newValue { values[slot] = newValue } else { remove(at: slot) }
                return
            }
            guard let newValue else { return }
            // At most half full counting tombstones, so that a look-up meets an empty slot soon.
            if (count + tombstones + 1) * 2 > ids.count { rebuild() }
            // `id` is not in the table (looked up above): the first free slot from its home.
            var i = Int(truncatingIfNeeded: id) & mask
            while ids[i] != Self.empty && ids[i] != Self.removed { i = (i + 1) & mask }
            if ids[i] == Self.removed { tombstones -= 1 }
            ids[i] = id
            values[i] = newValue
            count += 1
        }
    }

    /// Puts every live entry back from its home slot, without tombstones, in a table twice as
    /// large when more than a quarter of it is live.
    private mutating func rebuild() {
        let oldIDs = ids, oldValues = values
        let size = (count + 1) * 4 > oldIDs.count ? oldIDs.count * 2 : oldIDs.count
        ids = Array(repeating: Self.empty, count: size)
        values = Array(repeating: nil, count: size)
        mask = size - 1
        count = 0
        tombstones = 0
        for (i, id) in oldIDs.enumerated() where id != Self.empty && id != Self.removed { self[id] = oldValues[i] }
    }
}
