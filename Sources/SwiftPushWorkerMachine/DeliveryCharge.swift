/// Which deliveries of an entry count toward `max_deliveries` (docs/worker.md, "Dead letters").
/// Pure: each rule has a unit test (`DeliveryChargeTests`).
///
/// A delivery counts when a request of the entry was written in it: its holder heard from the
/// client that a request started on a connection, and recorded it (`QueueRequest.markWritten`,
/// `written:{s}`; re-delivered entries only: a first read's delivery is never recorded, and
/// counts against the allowance below). A holder killed before any request of the entry was written (APNs not
/// reachable, the connection's SETTINGS not in, all streams taken) does not bring the entry
/// nearer to a dead letter (issue 31: workers dying while APNs was unreachable, or before their
/// queued requests went out, dead-lettered healthy notifications that never left the machine).
///
/// Deliveries that are not known to be written are still counted, beyond an allowance of
/// `2 × max_deliveries`: an entry that kills its worker before a request of it is written (it
/// crashes the parser), or just after and before the record went out, is dead-lettered after
/// at most `3 × max_deliveries` deliveries (15 by default), instead of looping for ever; one
/// whose written deliveries are recorded, after `max_deliveries + 1` (its first, a read, is
/// not recorded).
struct DeliveryCharge {
    let maxDeliveries: Int

    /// Deliveries without a recorded write an entry may have on top of the counted ones.
    var unwrittenAllowance: Int { 2 * maxDeliveries }

    /// The deliveries that count of an entry delivered `deliveries` times, `written` of them
    /// recorded as written (at most `deliveries`: a retried record may have counted one twice).
    func charged(deliveries: Int, written: Int) -> Int {
        max(min(written, deliveries), deliveries - unwrittenAllowance)
    }

    /// Whether one more delivery would pass `max_deliveries`: the entry is dead-lettered instead.
    func exhausted(deliveries: Int, written: Int) -> Bool {
        charged(deliveries: deliveries, written: written) + 1 > maxDeliveries
    }

    /// Whether the next delivery is the last one allowed (its entry is sent alone).
    func lastChance(deliveries: Int, written: Int) -> Bool {
        charged(deliveries: deliveries, written: written) + 1 >= maxDeliveries
    }
}
