/// Which re-delivered entries had a request written in this life, recorded in the queue so that
/// the next holder counts only those deliveries toward `max_deliveries` (`DeliveryCharge`).
/// Off the hot path: only re-delivered entries are recorded (a first read's delivery never is:
/// it counts against the allowance of unwritten ones, so a poison entry ends one delivery
/// later), one report per entry from the client (not per token), batched into one request
/// `coalesce` after the first waiting, and a recorded entry's field is dropped as its final
/// settlement goes. Entries read and settled in one life, nearly all, cost nothing here (a
/// record for every multicast entry in flight past a checkpoint interval halved the
/// `bench-worker` multicast rate in an A/B). A worker that dies before a record lands loses
/// it: that delivery then counts as not written (the allowance bounds those).
extension ShardMachine {
    /// Most entries one `markWritten` request carries (each list).
    static let markBatch = 1000

    /// How an entry's deliveries count (`MachineSettings.maxDeliveries`).
    var charge: DeliveryCharge { DeliveryCharge(maxDeliveries: settings.maxDeliveries) }

    /// What the pacer orders a re-delivered entry waiting its turn by: its deliveries so far that
    /// count, then all of them (so that deliveries no request was written in spread over the
    /// entries too, instead of piling on the first toward the allowance).
    func paceCount(_ serial: UInt64) -> (charged: Int, all: Int) {
        guard let h = held[serial] else { return (0, 0) }
        return (charge.charged(deliveries: h.deliveries, written: h.writtenBefore), h.deliveries)
    }

    /// A paced group that could not be sent (the queue failed, or its connection was lost): its
    /// entries wait again, in their order.
    mutating func putBackSuspects(app: String, _ serials: [UInt64]) {
        let counts = Dictionary(serials.map { ($0, paceCount($0)) }, uniquingKeysWith: { a, _ in a })
        suspects.putBack(app: app, tags: serials) { counts[$0] ?? (0, 0) }
    }

    /// The client started requests of these notifications: their entries were written in this
    /// life. Each entry is recorded once, unless its final settlement is queued first.
    mutating func written(_ tags: [UInt64], _ t: WorkerTime) {
        for tag in tags {
            guard let h = held[tag >> 10], !h.writtenHere else { continue }
            h.writtenHere = true
            guard h.redelivered, !h.finalQueued else { continue }
            if marksToAdd.isEmpty { marksSinceNanos = t.nanos }
            marksToAdd.append(h.serial)
        }
    }

    /// `h`'s final settlement is queued: a record of its written deliveries, if there is one,
    /// is dropped by the next `markWritten`.
    mutating func forgetWritten(_ h: HeldEntry, _ t: WorkerTime) {
        guard h.markSent || h.writtenBefore > 0 else { return }
        marksToDrop.append(h.entryID)
    }

    /// Whether a `markWritten` that records entries (`adding`) or only drops them is in flight.
    func marking(adding: Bool) -> Bool {
        has { if case .markWritten(let add, _) = $0 { return add.isEmpty != adding }; return false }
    }

    /// When the records waiting go (`coalesce` after the oldest), if they wait; keys to drop go
    /// at once.
    var marksDueNanos: UInt64? {
        if !marksToDrop.isEmpty && !marking(adding: true) && !marking(adding: false) { return 1 }
        guard !marksToAdd.isEmpty, !marking(adding: true) else { return nil }
        return marksSinceNanos + coalesceNanos
    }

    /// Sends the records due (entries still held and not settled whole) on the main connection,
    /// and the keys to drop at once on the settle connection, behind the settle of their entries
    /// when it went in this step (a worker killed between the two loses a record: that delivery
    /// then counts as not written). No drop goes while records are in flight, so that none
    /// lands before the record it drops.
    mutating func sendMarks(_ t: WorkerTime, _ out: inout [WorkerAction]) {
        if !marksToAdd.isEmpty && !marking(adding: true) && (t.nanos >= marksSinceNanos + coalesceNanos || stopping) {
            var add: [String] = []
            var addSerials: [UInt64] = []
            var k = 0
            while k < marksToAdd.count && add.count < Self.markBatch {
                if let h = held[marksToAdd[k]], !h.finalQueued, !h.markSent {
                    h.markSent = true
                    add.append(h.entryID)
                    addSerials.append(h.serial)
                }
                k += 1
            }
            marksToAdd.removeFirst(k)
            marksSinceNanos = t.nanos
            if !add.isEmpty { request(.markWritten(add: add, drop: []), .markWritten(add: addSerials, drop: []), &out) }
        }
        if !marksToDrop.isEmpty && !marking(adding: true) && !marking(adding: false) {
            let drop = Array(marksToDrop.prefix(Self.markBatch))
            marksToDrop.removeFirst(drop.count)
            request(.markWritten(add: [], drop: drop), .markWritten(add: [], drop: drop), lane: .settle, &out)
        }
    }

    /// A `markWritten` lost with the connection or failed: it goes again (an entry counted twice
    /// by a retry is capped where the count is read).
    mutating func marksNotSent(add: [UInt64], drop: [String], _ t: WorkerTime) {
        for serial in add { held[serial]?.markSent = false }
        if marksToAdd.isEmpty { marksSinceNanos = t.nanos }
        marksToAdd += add
        marksToDrop += drop
    }
}
