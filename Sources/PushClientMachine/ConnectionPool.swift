import PushCore

/// The connections `ClientCore` knows and what opening them needs: an entry per connection
/// (`ConnectionEntry`, reused with a new generation once its connection is gone), one position
/// per connection of `PUSH_OPT_CONNECTIONS` (the connection holding it, or nil: to be opened), the
/// pool's self-sizing, the back-off's note and the name resolution in progress. A connection
/// out of its position (GOAWAY, retired) keeps its entry while it drains.
package struct ConnectionPool {
    /// Entries by `ConnectionID.index`.
    package var entries: [ConnectionEntry] = []
    /// Entries free for the next connection.
    private var freeEntries: [Int32] = []
    /// The connection holding each position (nil: none; opened when the back-off allows).
    package var positions: [ConnectionID?]
    /// Set when the pool sizes itself: how many of the positions hold a connection.
    package var sizing: PoolSizing?
    /// This thread recorded a failure (or was held back) since its last accepted notification:
    /// the next accepted one tells the reconnect schedule.
    package var mayBeBackingOff = false
    /// Connections take turns over a name's addresses.
    package var addressRotation = 0
    /// The resolution in progress: when it was asked for, and its ticket once the resolver
    /// thread gave one (`ClientCore.resolutionStarted`).
    package var resolution: (ticket: UInt64?, startedNanos: UInt64)?
    /// A fresh answer, used by the next round of connection attempts.
    package var resolvedAddresses: [SocketAddress]?

    package init(positions: Int, sizing: PoolSizing?) {
        self.positions = Array(repeating: nil, count: positions)
        self.sizing = sizing
    }

    /// How many positions should hold a connection: all, unless the pool sizes itself.
    package var target: Int { sizing?.target ?? positions.count }

    /// A position that should hold a connection has none (it is to be opened, or reopened).
    package var hasEmptyPosition: Bool { positions[..<target].contains { $0 == nil } }

    /// The entry of `id` while that connection is known (nil: gone, or never was).
    @inline(__always)
    package func entry(_ id: ConnectionID) -> Int? {
        let e = Int(id.index)
        guard e < entries.count, entries[e].isLive, entries[e].generation == id.generation else { return nil }
        return e
    }

    /// The id of the connection in entry `e`.
    @inline(__always)
    package func id(_ e: Int) -> ConnectionID { ConnectionID(index: Int32(e), generation: entries[e].generation) }

    /// Whether the connection in entry `e` holds its position (only such a one takes new streams).
    @inline(__always)
    package func holdsPosition(_ e: Int) -> Bool { positions[entries[e].position] == id(e) }

    /// A new connection at `position`, which it takes.
    package mutating func add(at position: Int, state: ConnectionState, record: ConnectionRecord, now: UInt64) -> ConnectionID {
        let e: Int
        if let free = freeEntries.popLast() {
            e = Int(free)
            entries[e].generation &+= 1
            entries[e].state = state
        } else {
            e = entries.count
            entries.append(ConnectionEntry(state: state))
        }
        entries[e].isLive = true
        entries[e].position = position
        entries[e].inFlight = InFlightList()
        entries[e].record = record
        entries[e].lastInputNanos = now
        positions[position] = id(e)
        return id(e)
    }

    /// The connection in entry `e` gives up its position (retired: it drains elsewhere, and the
    /// position opens again).
    package mutating func leavePosition(_ e: Int) {
        if holdsPosition(e) { positions[entries[e].position] = nil }
    }

    /// Forgets the connection in entry `e` (it is gone) and frees the entry.
    package mutating func remove(_ e: Int) {
        leavePosition(e)
        entries[e].isLive = false
        entries[e].record = ConnectionRecord()
        freeEntries.append(Int32(e))
    }

    /// The entries of every known connection: the pool's positions in order, then those out of
    /// the pool (draining).
    package var liveEntries: [Int] {
        var out: [Int] = []
        for case let id? in positions { if let e = entry(id) { out.append(e) } }
        for e in entries.indices where entries[e].isLive && !holdsPosition(e) { out.append(e) }
        return out
    }

    /// Connections of the pool that are ready for streams.
    package var readyCount: Int {
        var n = 0
        for case let id? in positions { if let e = entry(id), entries[e].state.phase == .ready { n += 1 } }
        return n
    }
}
