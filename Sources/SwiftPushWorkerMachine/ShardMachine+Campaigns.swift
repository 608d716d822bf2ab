import SwiftPushKeys

/// Campaign control in the machine (docs/worker.md, "Steering a campaign"): the shard's
/// controls read every `CampaignBoard.refreshNanos` (on the settle lane after the first: the
/// main one may wait in a blocking read), nothing taken in before the first read is back; entries of a paused
/// campaign moved aside before their claim; a cancelled one's notifications decided at intake.
extension ShardMachine {
    /// Reads the controls again when due.
    mutating func refreshCampaigns(_ t: WorkerTime, _ out: inout [WorkerAction]) {
        campaigns.wallMillis = t.wallMillis
        campaigns.stepNanos = t.nanos
        guard t.nanos >= campaigns.nextReadNanos, !has({ if case .controls = $0 { return true }; return false }) else { return }
        campaigns.nextReadNanos = t.nanos + CampaignBoard.refreshNanos
        // The first on the main connection, ahead of the first read it gates (no wait behind a
        // settle); the rest on the settle one, which never waits in a blocking read.
        request(.controls, .controls, lane: campaigns.loaded ? .settle : .main, &out)
    }

    /// The controls read: the copy replaced, each change logged.
    mutating func controlsRead(_ controls: [String: CampaignControl], _ out: inout [WorkerAction]) {
        for line in campaigns.update(controls) { out.append(.log(line)) }
    }

    /// Splits entries just read into those to claim and those of a paused campaign, which are
    /// asked to move aside (their notifications stay reserved until the answer).
    mutating func parkPaused(_ boxes: [EntryBox], fromPending: Bool, redelivered: Bool, _ out: inout [WorkerAction]) -> [EntryBox] {
        guard !campaigns.controls.isEmpty else { return boxes }
        var going: [EntryBox] = []
        var parking: [EntryBox] = []
        var asks: [ParkRequest] = []
        var adding: [String: Int] = [:]
        for b in boxes {
            let c = b.entry.campaign, n = max(1, b.entry.count)
            switch campaigns.decision(c) {
            case .park:
                parking.append(b)
                asks.append(ParkRequest(entryID: b.entry.entryID, campaign: c, count: n))
            case .throttle:
                // Held up to `throttleCap`; past it, set aside (`throttleDue`).
                let rate = campaigns.controls[c]?.rate ?? 1
                let holding = (campaigns.waitingNotes[c] ?? 0) + adding[c, default: 0]
                if holding + n <= throttleCap(rate) {
                    adding[c, default: 0] += n
                    going.append(b)
                    continue
                }
                let due = throttleDue(c, notes: n, holding: holding, rate: rate)
                parking.append(b)
                asks.append(ParkRequest(entryID: b.entry.entryID, campaign: c, count: n, dueMillis: due))
            default:
                going.append(b)
            }
        }
        if parking.isEmpty { return boxes }
        let notes = parking.reduce(0) { $0 + max(1, $1.entry.count) }
        reservedNotes += notes
        request(.park(asks), .park(parking, fromPending: fromPending, redelivered: redelivered, reserved: notes), &out)
        return going
    }

    /// The park answered: what moved aside is gone from this worker, what Redis kept in the
    /// stream (the campaign was resumed meanwhile, or the entry is partly settled) is claimed
    /// and sent as usual; what another worker took over is let go.
    mutating func parked(_ boxes: [EntryBox], _ answers: [ParkAnswer], fromPending: Bool, redelivered: Bool, reserved: Int,
                         _ out: inout [WorkerAction]) {
        reservedNotes -= reserved
        var keep: [EntryBox] = []
        var moved = 0
        for (b, a) in zip(boxes, answers) {
            switch a {
            case .parked: if campaigns.decision(b.entry.campaign) == .park { moved += 1 }
            case .takeIn: keep.append(b)
            case .notOurs: break
            }
        }
        if moved > 0 {
            out.append(.log(.init(.info, "paused campaign's entries moved aside", ["count": String(moved), "campaign": boxes[0].entry.campaign])))
        }
        if !keep.isEmpty { claim(keep, fromPending: fromPending, redelivered: redelivered, &out) }
    }

    /// Every notification of `h` still waiting, when its campaign is cancelled: REJECTED
    /// `Cancelled`, never sent.
    mutating func cancelIfCancelled(_ h: HeldEntry, _ t: WorkerTime) {
        guard h.open > 0, campaigns.decision(h.entry.campaign) == .cancel else { return }
        decideAll(h, outcome(h, .cancelled, detail: "campaign '\(h.entry.campaign)' was cancelled; not sent"), t)
    }
}
