/// Scheduled sending (issue 32, item 5; docs/worker.md, "Scheduled sending"): an entry whose
/// `send_at` (UNIX ms) is still ahead when it is read is not sent but parked whole in the
/// delayed set that 429s use, due at `send_at`, as a new entry of the same kind and lane
/// (`origin` naming it, so its ids' guards hold; `retries` unchanged: it is no trip). The
/// machine that parked it promotes the delayed set when it falls due, so it goes back to its
/// stream then, not at the next `reclaim_interval_ms`; read again, its `send_at` has passed and
/// it is sent. `not_after` keeps its meaning (checked at each intake, before this).
extension ShardMachine {
    /// The entry's `send_at`, UNIX ms: nil without one, or with one that is not a number (the
    /// entry is then sent now: a schedule that cannot be read holds nothing back).
    static func sendAt(_ e: WorkEntry) -> Int64? {
        e.raw.value("send_at").flatMap { Int64(String(decoding: $0, as: UTF8.self)) }
    }

    /// If `h`'s `send_at` is ahead, parks every notification of it still waiting, due then, and
    /// returns true.
    mutating func holdUntilSendAt(_ h: HeldEntry, _ t: WorkerTime) -> Bool {
        guard let at = Self.sendAt(h.entry), at > t.wallMillis else { return false }
        for i in h.tracks.indices where h.tracks[i].phase == .waiting { park(h, i, dueMillis: at, t, trip: false) }
        // 2 ms late: the wall clock the promotion reads must have reached send_at by then.
        let wake = t.nanos + UInt64(at - t.wallMillis + 2) * 1_000_000
        scheduledWakes.insert(wake, at: scheduledWakes.firstIndex { $0 > wake } ?? scheduledWakes.count)
        return true
    }

    /// The longest a read may wait in Redis before an entry this machine scheduled falls due:
    /// the promotion goes on the read's connection, behind it (a read of 500 ms made it up to
    /// half a second late).
    func scheduledBlockCap(_ t: WorkerTime) -> Int {
        guard let first = scheduledWakes.first else { return Int.max }
        return first > t.nanos ? Int((first - t.nanos + 999_999) / 1_000_000) : 0
    }

    /// Promotes the delayed set once an entry this machine scheduled falls due (every entry due
    /// by then goes back, whoever parked it).
    mutating func promoteScheduled(_ t: WorkerTime, _ out: inout [WorkerAction]) {
        guard let first = scheduledWakes.first, t.nanos >= first,
              !has({ if case .promote = $0 { return true }; return false }) else { return }
        scheduledWakes.removeAll { $0 <= t.nanos }
        request(.promote(nowMillis: t.wallMillis, max: 1000), .promote, &out)
    }
}
