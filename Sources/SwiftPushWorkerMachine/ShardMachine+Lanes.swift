/// The two lanes of a shard (`FastLane`): what the bulk lane may take of max_in_flight, and
/// the read of the fast lane alone when the bulk lane's share is used up.
extension ShardMachine {
    /// The share of max_in_flight kept for the fast lane: `fast_reserve`, at most half.
    var fastReserve: Int { min(max(0, settings.fastReserve), settings.maxInFlight / 2) }

    /// Notifications the bulk lane may still take in: max_in_flight less the fast reserve, less
    /// what the bulk lane holds and what reads and claims have reserved (never more than
    /// `room`). Fast-lane entries may use the whole of max_in_flight.
    var bulkRoom: Int {
        min(room, settings.maxInFlight - fastReserve - (heldNotes - fastHeldNotes) - reservedNotes)
    }

    /// The bulk lane has no room: reads the fast lane alone, at once (never waiting in Redis: a
    /// wait would hold back the claims behind it and the bulk read that room will allow), and
    /// after one that came back short, again `shortReadPauseNanos` later.
    mutating func readFastOnly(_ t: WorkerTime, _ out: inout [WorkerAction]) {
        guard t.nanos >= nextFastReadNanos else { return }
        nextFastReadNanos = 0
        let asked = min(settings.batch, max(1, room / max(1, fastNotesPerEntry)))
        let reserved = min(room, asked * fastNotesPerEntry)
        reservedNotes += reserved
        request(.readFast(max: asked), .readFast(asked: asked, reserved: reserved), &out)
    }

    /// A fast-lane-only read answered with `got` entries of `asked`.
    mutating func fastReadAnswered(got: Int, asked: Int, _ t: WorkerTime) {
        if got < asked { nextFastReadNanos = t.nanos + Self.shortReadPauseNanos }
    }

    /// When the next fast-lane-only read may go, if one waits for that time alone (for
    /// `nextWakeNanos`: nil whenever `readNext` would not read then, so that a time past never
    /// makes the driver spin).
    var fastReadWakeNanos: UInt64? {
        guard nextFastReadNanos > 0, ownPass == nil, room > 0, bulkRoom <= 0,
              !has({ switch $0 { case .read, .readFast, .ownPending, .takeOwn: return true; default: return false } }) else { return nil }
        return max(nextFastReadNanos, nextReadNanos)
    }

    /// Keeps `fastHeldNotes` with `heldNotes`: `delta` notifications of `h` held (negative: let go).
    mutating func heldChanged(_ h: HeldEntry, by delta: Int) {
        if h.isFast { fastHeldNotes += delta }
    }

    /// The entries of a read, re-read or reclaim: the largest of each lane sets what the next
    /// read of that lane counts an entry as.
    mutating func noteEntrySizes(_ boxes: [EntryBox]) {
        var bulk: Int?, fast: Int?
        for b in boxes {
            if FastLane.isFast(b.entry.entryID) { fast = max(fast ?? 1, b.entry.count) } else { bulk = max(bulk ?? 1, b.entry.count) }
        }
        if let bulk { notesPerEntry = bulk }
        if let fast { fastNotesPerEntry = fast }
    }
}

extension HeldEntry {
    /// Whether it came from the fast lane.
    var isFast: Bool { FastLane.isFast(entryID) }
}
