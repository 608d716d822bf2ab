/// The two lanes of a shard (`FastLane`): what the bulk lane may take of max_in_flight, and
/// the fast lane's own read, waiting for its next entry on a connection of its own.
extension ShardMachine {
    /// The share of max_in_flight kept for the fast lane: `fast_reserve`, at most half.
    var fastReserve: Int { min(max(0, settings.fastReserve), settings.maxInFlight / 2) }

    /// Notifications the bulk lane may still take in: max_in_flight less the fast reserve, less
    /// what the bulk lane holds and what its reads and claims have reserved (never more than
    /// `room`). Fast-lane entries may use the whole of max_in_flight.
    var bulkRoom: Int {
        min(room, settings.maxInFlight - fastReserve - (heldNotes - fastHeldNotes) - (reservedNotes - fastReservedNotes))
    }

    /// The read of the fast lane on its own connection (`WorkerAction.Lane.fast`): always one
    /// in flight while the machine runs and has room, waiting in Redis (`XREADGROUP BLOCK`) for
    /// the lane's next entry, so that a transactional notification is read the moment it is
    /// added, and claimed on that connection too (`take`), never queued behind the bulk lane's
    /// reads, claims and settles on the main one. Before it (issue 32) a fast entry waited for
    /// the main connection's next read: with the bulk lane's share used up, a read of the fast
    /// lane alone every 10 ms, so singles beside a 1,000,000 backlog took 13 ms (median) and 29
    /// ms (p99) from their XADD to APNs. The main read still names the fast lane first, so an
    /// entry is read by whichever read comes first (a stream delivers each entry to one read).
    ///
    /// It reserves its room out of `fast_reserve` (`fastReservedNotes`, which the bulk lane's
    /// room does not count), so a read waiting here takes nothing from the bulk lane. With
    /// `fast_reserve` 0 the fast lane has no share and no read of its own: its entries come
    /// with the main connection's reads, first.
    mutating func readFastNext(_ t: WorkerTime, _ out: inout [WorkerAction]) {
        guard fastReserve > 0, !stopping, ownPass == nil, campaigns.loaded, room > 0, t.nanos >= nextFastReadNanos else { return }
        if has({ if case .readFast = $0 { return true }; return false }) { return }
        nextFastReadNanos = 0
        let share = max(fastNotesPerEntry, fastReserve - fastHeldNotes)
        let asked = min(settings.batch, max(1, min(room, share) / max(1, fastNotesPerEntry)))
        let reserved = min(room, asked * fastNotesPerEntry)
        reservedNotes += reserved
        fastReservedNotes += reserved
        request(.readFast(max: asked, blockMillis: settings.blockMillis),
                .readFast(asked: asked, reserved: reserved, blockMillis: settings.blockMillis, sentNanos: t.nanos), lane: .fast, &out)
    }

    /// The fast lane's read answered with `got` entries of `asked`: a read that came back
    /// empty well before its wait was over (a Redis that does not wait) pauses
    /// `shortReadPauseNanos`, so that it cannot make the machine spin; any other goes again at
    /// once.
    mutating func fastReadAnswered(got: Int, blockMillis: Int, sentNanos: UInt64, _ t: WorkerTime) {
        let waitedLess = got == 0 && t.nanos - min(t.nanos, sentNanos) < UInt64(blockMillis) * 500_000
        if blockMillis == 0 || waitedLess { nextFastReadNanos = t.nanos + Self.shortReadPauseNanos }
    }

    /// When the fast lane's next read may go, if it waits for that time alone (for
    /// `nextWakeNanos`: nil whenever `readFastNext` would not read then, so that a time past
    /// never makes the driver spin).
    var fastReadWakeNanos: UInt64? {
        guard nextFastReadNanos > 0, fastReserve > 0, !stopping, ownPass == nil, campaigns.loaded, room > 0,
              !has({ if case .readFast = $0 { return true }; return false }) else { return nil }
        return nextFastReadNanos
    }

    /// A fast-lane read's reservation given up (answered, failed or lost with the connection).
    mutating func fastReadEnded(reserved: Int) {
        reservedNotes -= reserved
        fastReservedNotes -= reserved
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
