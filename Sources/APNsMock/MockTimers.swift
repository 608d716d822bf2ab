import PushCore

/// Answers waiting for `MockFaults.responseDelayMillis`: a min-heap by due time, run by the
/// server's loop (whose epoll wait ends at the earliest due time), so a delay never blocks the
/// thread.
final class MockTimers {
    private struct Entry {
        let due: UInt64
        /// Breaks ties so that answers due together go out in the order they were decided.
        let sequence: UInt64
        let connection: MockConnection
        let stream: MockStream
        let serial: UInt64

        func before(_ other: Entry) -> Bool {
            due != other.due ? due < other.due : sequence < other.sequence
        }
    }

    private var heap: [Entry] = []
    private var sequence: UInt64 = 0

    var isEmpty: Bool { heap.isEmpty }

    /// Answers `stream` on `connection` in `millis` milliseconds.
    func schedule(afterMillis millis: Int, connection: MockConnection, stream: MockStream) {
        sequence += 1
        let due = MonotonicTime.nanos() + UInt64(max(0, millis)) * 1_000_000
        heap.append(Entry(due: due, sequence: sequence, connection: connection, stream: stream, serial: stream.serial))
        var i = heap.count - 1
        while i > 0 {
            let parent = (i - 1) / 2
            guard heap[i].before(heap[parent]) else { break }
            heap.swapAt(i, parent)
            i = parent
        }
    }

    /// How long the loop may wait for events before the next answer is due (-1: no limit).
    func waitMillis() -> Int32 {
        guard let first = heap.first else { return -1 }
        let now = MonotonicTime.nanos()
        if first.due <= now { return 0 }
        // Round up: waking a little late is fine, waking early only spins.
        return Int32(min((first.due - now + 999_999) / 1_000_000, 60_000))
    }

    /// Sends every answer that is due.
    func fireDue() {
        let now = MonotonicTime.nanos()
        while let first = heap.first, first.due <= now {
            let e = popFirst()
            e.connection.answerLater(e.stream, serial: e.serial)
        }
    }

    /// Forgets every pending answer (the server is stopping).
    func removeAll() { heap.removeAll() }

    private func popFirst() -> Entry {
        let first = heap[0]
        let last = heap.removeLast()
        if !heap.isEmpty {
            heap[0] = last
            var i = 0
            while true {
                let l = 2 * i + 1, r = l + 1
                var m = i
                if l < heap.count, heap[l].before(heap[m]) { m = l }
                if r < heap.count, heap[r].before(heap[m]) { m = r }
                if m == i { break }
                heap.swapAt(i, m)
                i = m
            }
        }
        return first
    }
}
