/// Taking entries in: reads (bounded by `max_in_flight`), claims, checks, and the first send.
extension ShardMachine {
    /// Notifications that may still be taken in.
    var room: Int { settings.maxInFlight - heldNotes - reservedNotes }
    /// The room one more entry needs: the size of the largest entry read lately (the largest an
    /// entry may be, until the first read), or all of max_in_flight when that is smaller.
    var entryRoom: Int { max(1, min(notesPerEntry, settings.maxInFlight)) }
    /// What a read waits to have room for, and a settle to carry: a quarter of max_in_flight
    /// (no more than one read's worth), and at least one entry.
    var fillTarget: Int { max(entryRoom, min(settings.maxInFlight / 4, settings.batch * notesPerEntry)) }
    /// `MachineSettings.coalesceMillis` in nanoseconds.
    var coalesceNanos: UInt64 { UInt64(settings.coalesceMillis) * 1_000_000 }

    /// Starts the next read (or step of a re-read of our own pending entries) when there is
    /// room and none is in flight. The next read goes at once, sent behind the claim of the
    /// last (Redis fetches batch k+1 while the machine sends batch k), and waits in Redis
    /// (`XREADGROUP BLOCK`) for the first entry when the stream has none: an entry added then is
    /// read the moment it is added, and what comes while the machine claims and sends gathers
    /// for the next read (issue 31: a read that came back short paused 10 ms, and every lone
    /// notification paid it). A read does not wait in Redis when its connection is wanted for
    /// something else soon (`readMayBlock`): it then pauses a little after coming back short.
    mutating func readNext(_ t: WorkerTime, _ out: inout [WorkerAction]) {
        guard room > 0, t.nanos >= nextReadNanos, campaigns.loaded else { return }
        // A stop reads nothing new, but goes on taking back our own pending entries (a SIGTERM
        // right after a restart finishes them too, issue 31) until the drain time is over.
        if stopping && (ownPass == nil || t.nanos >= drainDeadlineNanos) { return }
        if has({ switch $0 { case .read, .ownPending, .takeOwn: return true; default: return false } }) { return }
        if let pass = ownPass {
            // Listing our own pending entries goes on when there is room for a good share of
            // them (a quarter of max_in_flight, or everything when nothing is held): taking
            // them back one at a time as single slots free up would cost a round trip each.
            guard room >= entryRoom, room >= settings.maxInFlight / 4 || held.isEmpty else { return }
            request(.ownPending(after: pass.cursor, max: pendingPage), .ownPending, &out)
            return
        }
        // The bulk lane's share used up: the fast lane is read on its own connection
        // (`readFastNext`).
        if bulkRoom <= 0 {
            readWaitSinceNanos = nil
            return
        }
        // A read waits until a quarter of max_in_flight is free (at most coalesceMillis): reading
        // the moment one entry's worth was free made every read, claim and settle carry one or
        // two 500-token entries, and Redis's cost per request (a wake-up, a script call) is the
        // same whatever it carries. With nothing held it reads at once.
        if room < fillTarget && !held.isEmpty {
            let since = readWaitSinceNanos ?? t.nanos
            readWaitSinceNanos = since
            guard t.nanos >= since + coalesceNanos else { return }
        }
        readWaitSinceNanos = nil
        // One read of both lanes, the fast one first, as many entries of each as the bulk lane
        // has room for (XREADGROUP's COUNT is per stream).
        let bulk = bulkRoom
        let asked = min(settings.batch, max(1, bulk / notesPerEntry))
        let reserved = min(bulk, asked * notesPerEntry)
        let block = readMayBlock ? min(settings.blockMillis, scheduledBlockCap(t)) : 0
        reservedNotes += reserved
        request(.read(max: asked, blockMillis: block), .read(asked: asked, reserved: reserved, blockMillis: block, sentNanos: t.nanos), &out)
    }

    /// Whether a read may wait in Redis for its first entry: it holds the main connection until
    /// an entry comes or `blockMillis` passes, and what is sent behind it waits as long. Claims,
    /// maintenance (a reclaim's entries have waited `min_idle_ms` already) and the heartbeat can
    /// wait; entries taken back at a restart, waiting for their counted delivery
    /// (`sendSuspects`) or being taken in for it, should not.
    var readMayBlock: Bool {
        suspects.waitingCount == 0 && !has {
            switch $0 {
            case .claim(_, redelivered: true, _), .countDelivery, .takeOwn: return true
            default: return false
            }
        }
    }

    /// A read answered with `got` of the `asked` entries: whether the worker is behind its
    /// stream (`behind`), and when the next read may go. A read that came back short goes
    /// again at once when it could wait in Redis (it waits there), unless it came back empty
    /// well before its wait was over (a Redis that does not wait must not make the machine
    /// spin); one that could not wait pauses `shortReadPauseNanos`.
    mutating func readAnswered(got: Int, asked: Int, blockMillis: Int, sentNanos: UInt64, _ t: WorkerTime) {
        behind = got >= asked
        if got >= asked { return }
        let waitedLess = got == 0 && t.nanos - min(t.nanos, sentNanos) < UInt64(blockMillis) * 500_000
        if blockMillis == 0 || waitedLess { nextReadNanos = t.nanos + Self.shortReadPauseNanos }
    }

    /// Entries listed per XPENDING page of a re-read: all that a previous life can have left
    /// (max_in_flight entries of one notification each) in one page, one more so that a short
    /// page says it was the last; at least 1,000, at most 10,000.
    var pendingPage: Int { max(1000, min(10_000, settings.maxInFlight + 1)) }
    /// After a read that found fewer entries than it asked for without waiting in Redis, the
    /// next waits this long (`readAnswered`).
    static let shortReadPauseNanos: UInt64 = 10_000_000

    /// Entries read, re-read or reclaimed: each is read (`EntryReader`) and its ids claimed.
    /// `fromPending`: taken back or over (a previous holder may have settled part of it: its
    /// progress is asked for); `redelivered`: its notifications wait their paced turn.
    /// `lane`: the connection their claim goes on (the fast lane's read claims on its own).
    mutating func take(_ entries: [QueueEntry], fromPending: Bool, redelivered: Bool, lane: WorkerAction.Lane = .main,
                       _ out: inout [WorkerAction]) {
        // A reclaim can return an entry this worker still holds (slow, not dead): keep ours.
        let fresh = entries.filter { heldByID[$0.entryID] == nil }
        if fresh.isEmpty { return }
        let read = fresh.map { EntryBox(reader.read($0)) }
        noteEntrySizes(read)
        // A paused campaign's entries are moved aside instead (`ShardMachine+Campaigns`).
        let boxes = parkPaused(read, fromPending: fromPending, redelivered: redelivered, &out)
        claim(boxes, fromPending: fromPending, redelivered: redelivered, lane: lane, &out)
    }

    /// Claims the ids of entries read (`take`), their notifications reserved until the answer.
    mutating func claim(_ boxes: [EntryBox], fromPending: Bool, redelivered: Bool, lane: WorkerAction.Lane = .main,
                        _ out: inout [WorkerAction]) {
        if boxes.isEmpty { return }
        let notes = boxes.reduce(0) { $0 + max(1, $1.entry.count) }
        reservedNotes += notes
        let claims = boxes.map { b in
            ClaimRequest(entryID: b.entry.entryID, origin: b.entry.origin,
                         wantProgress: b.entry.count > 1 && (fromPending || b.entry.raw.deliveries > 1), ids: b.entry.claims.map(\.id))
        }
        request(.claim(claims), .claim(boxes, redelivered: redelivered, reserved: notes), lane: lane, &out)
    }

    /// The claim answered: the entries are held, what cannot be sent gets its outcome, the rest
    /// is sent (or waits its turn, re-delivered).
    mutating func takeIn(_ boxes: [EntryBox], _ answers: [ClaimAnswer], redelivered: Bool, _ t: WorkerTime, _ out: inout [WorkerAction]) {
        var toSend: [String: [SendItem]] = [:]
        for (k, box) in boxes.enumerated() {
            let e = box.entry
            guard heldByID[e.entryID] == nil else { continue }
            let answer = k < answers.count ? answers[k] : ClaimAnswer()
            let h = HeldEntry(box: box, serial: nextSerial, deliveries: e.raw.deliveries, suspect: redelivered)
            // A re-delivered entry's count is of deliveries before this one; any other's
            // includes this one (the read that brought it).
            h.earlierDeliveries = redelivered ? e.raw.deliveries : max(0, e.raw.deliveries - 1)
            h.writtenBefore = min(e.raw.written, h.earlierDeliveries)
            nextSerial += 1
            held[h.serial] = h
            heldByID[e.entryID] = h.serial
            heldNotes += h.unsettled
            heldChanged(h, by: h.unsettled)
            // Done before: an earlier holder's settle recorded them.
            if answer.progress != nil {
                for i in h.tracks.indices where answer.isDone(i) {
                    h.tracks[i].phase = .decided
                    h.open -= 1
                    h.unsettled -= 1
                    heldNotes -= 1
                    heldChanged(h, by: -1)
                }
            }
            intakeDecisions(h, answer, redelivered: redelivered, t)
            // A cancelled campaign's entry ends here, before a send_at could hold it.
            cancelIfCancelled(h, t)
            if h.open > 0 && holdUntilSendAt(h, t) {
                settleIfComplete(h, t)
                continue
            }
            if h.open > 0 && redelivered {
                if stopping && t.nanos >= drainDeadlineNanos { leave(h) } else { suspects.add(tag: h.serial, app: h.app, count: paceCount(h.serial)) }
            } else if h.open > 0 && !holdForBudget(h) {
                for i in h.tracks.indices where h.tracks[i].phase == .waiting {
                    if case .ready(let note) = e.notes[i] { toSend[e.app, default: []].append(SendItem(tag: h.tag(i), note: note, entry: box)) }
                }
            }
            settleIfComplete(h, t)
        }
        for app in toSend.keys.sorted() { send(app: app, toSend[app]!, t, &out) }
    }

    /// What is decided at intake, before anything is sent: duplicates, dead letters, expiry,
    /// the reader's refusals.
    mutating func intakeDecisions(_ h: HeldEntry, _ answer: ClaimAnswer, redelivered: Bool, _ t: WorkerTime) {
        let e = h.entry
        // A duplicate id: a single or multicast entry's is every notification's; a batch
        // element's is its own.
        if let dup = answer.duplicates.first, e.kind != .batch {
            counters.duplicates += h.open
            decideAll(h, outcome(h, .duplicateId,
                                 detail: "id '\(e.id ?? "")' was already used by entry \(dup.owner)"), t)
            return
        }
        for dup in answer.duplicates where dup.position < e.claims.count {
            let i = e.claims[dup.position].note
            guard h.tracks[i].phase == .waiting else { continue }
            counters.duplicates += 1
            decide(h, i, outcome(h, i, .duplicateId,
                                 detail: "id '\(e.claims[dup.position].id)' was already used by entry \(dup.owner)"), t)
        }
        // Would one more delivery pass max_deliveries, counting the written ones (`DeliveryCharge`)?
        if charge.exhausted(deliveries: h.earlierDeliveries, written: h.writtenBefore) {
            counters.deadLettered += h.open
            decideAll(h, outcome(h, .deadLetter, detail: deadLetterDetail(h.earlierDeliveries, written: h.writtenBefore)), t)
            return
        }
        if let r = e.rejection {
            decideAll(h, outcome(h, kind: .rejected, reason: r.reason, detail: r.detail), t)
            return
        }
        let nowSeconds = t.wallMillis / 1000
        if e.kind == .multicast, case .ready(let first)? = e.notes.first(where: { if case .ready = $0 { return true }; return false }),
           let notAfter = first.notAfter, nowSeconds > notAfter {
            decideAll(h, outcome(h, .expired, detail: "not_after \(notAfter) has passed; not sent"), t)
            return
        }
        for (i, slot) in e.notes.enumerated() where h.tracks[i].phase == .waiting {
            switch slot {
            case .rejected(let r, _, _):
                decide(h, i, outcome(h, i, kind: .rejected, reason: r.reason, detail: r.detail), t)
            case .ready(let note):
                if let notAfter = note.notAfter, nowSeconds > notAfter {
                    decide(h, i, outcome(h, i, .expired, detail: "not_after \(notAfter) has passed; not sent"), t)
                }
            }
        }
    }

    /// The dead letter's detail (docs/worker.md, "Dead letters").
    func deadLetterDetail(_ deliveries: Int, written: Int) -> String {
        "\(deliveries) deliveries (max_deliveries \(settings.maxDeliveries)), \(written) of them known to have written a "
            + "request to APNs, each ended without an outcome: the worker holding it died or stopped first. A delivery counts "
            + "when a request of it was written, or past \(charge.unwrittenAllowance) that were not: an entry that kills its "
            + "worker, or workers dying faster than APNs answers. Not sent again"
    }

    /// Sends `items` through `app`'s client, past the apps whose credentials APNs refuses.
    mutating func send(app: String, _ items: [SendItem], _ t: WorkerTime, _ out: inout [WorkerAction]) {
        let items = refusals.isEmpty ? items : sendingPastRefusals(app: app, items, t)
        if items.isEmpty { return }
        for item in items {
            guard let h = held[item.tag >> 10] else { continue }
            let i = Int(item.tag & 1023)
            h.tracks[i].phase = .inFlight
            h.tracks[i].sends &+= 1
            if h.tracks[i].sends == 1 { h.tracks[i].firstSendNanos = t.nanos }
            h.inFlight += 1
        }
        out.append(.send(app: app, items))
    }
}
