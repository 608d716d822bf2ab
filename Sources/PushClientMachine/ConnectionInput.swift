#if canImport(Glibc)
import Glibc
#endif

/// The facts one connection recorded and its owner has not taken yet (`ConnectionFact`), in
/// order: a buffer that grows to the largest read's worth and is reused, so recording allocates
/// nothing in the steady state. Owned by its connection; I/O thread only.
///
/// The owner takes facts one at a time (`next`), so that deciding on one may end in taking the
/// rest (a decision that closes the connection makes its owner account for everything first):
/// each fact is taken once, in order, whoever takes it.
package struct ConnectionInput {
    /// No facts yet (the buffer is allocated by the first `append`).
    package init() {}

    // Usable from inline: nghttp2's callbacks in the driver record facts per stream (issue 34).
    @usableFromInline var facts: UnsafeMutablePointer<ConnectionFact>?
    @usableFromInline var capacity = 0
    /// Facts recorded, and taken.
    @usableFromInline var count = 0
    private var taken = 0
    /// Each GOAWAY's debug data (APNs's reason), in the order of the `.goaway` facts, and how
    /// many of them were taken.
    private var goawayReasons: [String?] = []
    private var goawaysTaken = 0

    /// Nothing waits to be taken.
    package var isEmpty: Bool { taken == count }

    /// Records `fact` after the others.
    @inlinable @inline(__always)
    package mutating func append(_ fact: ConnectionFact) {
        if count == capacity { grow() }
        (facts! + count).initialize(to: fact)
        count += 1
    }

    /// Records a GOAWAY and its debug data.
    package mutating func appendGoaway(lastStreamID: Int32, errorCode: UInt32, reason: String?) {
        append(.goaway(lastStreamID: lastStreamID, errorCode: errorCode))
        goawayReasons.append(reason)
    }

    /// The next fact not taken yet (nil: none; the buffer is then reused from its start).
    @inline(__always)
    package mutating func next() -> ConnectionFact? {
        guard taken < count else {
            if count > 0 { reset() }
            return nil
        }
        taken += 1
        return facts![taken - 1]
    }

    /// The debug data of the GOAWAY just taken with `next`.
    package mutating func takeGoawayReason() -> String? {
        guard goawaysTaken < goawayReasons.count else { return nil }
        goawaysTaken += 1
        return goawayReasons[goawaysTaken - 1]
    }

    /// Frees the buffer (the connection's deinit).
    package mutating func deallocate() {
        facts?.deallocate()
        facts = nil
        capacity = 0
        reset()
    }

    private mutating func reset() {
        count = 0
        taken = 0
        if !goawayReasons.isEmpty {
            goawayReasons.removeAll()
            goawaysTaken = 0
        }
    }

    @usableFromInline mutating func grow() {
        let newCapacity = max(64, capacity * 2)
        let bigger = UnsafeMutablePointer<ConnectionFact>.allocate(capacity: newCapacity)
        if let facts {
            bigger.moveInitialize(from: facts, count: count)
            facts.deallocate()
        }
        facts = bigger
        capacity = newCapacity
    }
}
