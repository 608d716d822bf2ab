/// Notifications waiting out a retry delay (429/5xx), ordered by when they are due: a binary
/// min-heap of (due time, slot index), so the I/O loop can sleep exactly until the next one
/// and release it within about a millisecond, however many wait. I/O thread only.
package struct RetryTimers {
    private var heap: [(due: UInt64, index: Int32)] = []

    /// How many wait.
    package var count: Int { heap.count }
    package var isEmpty: Bool { heap.isEmpty }
    /// When the earliest one is due (monotonic ns), nil when none waits.
    package var firstDue: UInt64? { heap.first?.due }

    /// Adds slot `index`, due at `due`.
    package mutating func insert(_ index: Int32, at due: UInt64) {
        heap.append((due, index))
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            if heap[parent].due <= heap[child].due { break }
            heap.swapAt(parent, child)
            child = parent
        }
    }

    /// Removes and returns the earliest one's slot index (-1 when empty).
    package mutating func popFirst() -> Int32 {
        guard let first = heap.first else { return -1 }
        let last = heap.removeLast()
        if !heap.isEmpty {
            heap[0] = last
            var parent = 0
            while true {
                let left = 2 * parent + 1, right = left + 1
                var smallest = parent
                if left < heap.count && heap[left].due < heap[smallest].due { smallest = left }
                if right < heap.count && heap[right].due < heap[smallest].due { smallest = right }
                if smallest == parent { break }
                heap.swapAt(parent, smallest)
                parent = smallest
            }
        }
        return first.index
    }

    /// Removes every one, earliest first (shutdown).
    package mutating func removeAll() -> [Int32] {
        var out: [Int32] = []
        out.reserveCapacity(heap.count)
        while !heap.isEmpty { out.append(popFirst()) }
        return out
    }
}
