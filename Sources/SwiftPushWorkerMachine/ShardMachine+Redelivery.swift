/// Entries that come back: this consumer's own pending entries re-read (at start, after a lost
/// Redis connection), other consumers' reclaimed, re-delivered entries sent in paced groups;
/// and the maintenance round (backlog, delayed entries promoted, reclaims). See docs/worker.md,
/// "Re-reading and reclaiming" and "Dead letters".
extension ShardMachine {
    /// One page of our own pending entries listed: those not held are taken back (without
    /// counting a delivery) in one call, up to the room there is (`RedisStreamScripts.takeOwn`
    /// counts each entry's notifications); the pass ends, with one log line, when a page comes
    /// back short and all of it is dealt with. A worker restarted with 5,000 pending entries
    /// takes them back in one listing, one take and one claim (issue 31: 23 round trips and
    /// 2-11 s when each take carried what fitted at the largest entry size, 5 entries at first).
    mutating func ownPendingListed(_ page: [PendingEntry], _ t: WorkerTime, _ out: inout [WorkerAction]) {
        guard var pass = ownPass else { return }
        pass.reads += 1
        let last = page.count < pendingPage
        let notHeld = page.filter { heldByID[$0.entryID] == nil }.map(\.entryID)
        if notHeld.isEmpty {
            pass.listed += page.count
            pass.held += page.count
            if let end = page.last { pass.cursor = end.entryID }
            ownPass = pass
            if last { endOwnPass(&out) }
            return
        }
        pass.reads += 1
        ownPass = pass
        request(.takeOwn(notHeld, budget: max(1, room)),
                .takeOwn(redelivered: pass.suspects, page: page.map(\.entryID), taking: notHeld, last: last), &out)
    }

    /// The take-back of a listed page answered: the pass goes on after the last entry dealt
    /// with (all of the page, or up to where the budget stopped it), or ends.
    mutating func takenBack(_ entries: [QueueEntry], considered: Int, page: [String], taking: [String], last: Bool,
                            redelivered: Bool, _ out: inout [WorkerAction]) {
        if var pass = ownPass {
            let whole = considered >= taking.count
            let upTo = whole ? page.count - 1 : (page.firstIndex(of: taking[max(0, considered - 1)]) ?? page.count - 1)
            let takingSet = Set(taking)
            pass.listed += upTo + 1
            pass.held += page[...upTo].filter { !takingSet.contains($0) }.count
            pass.cursor = page[upTo]
            pass.taken += entries.count
            ownPass = pass
            if whole && last { endOwnPass(&out) }
        }
        counters.read += entries.count
        take(entries, fromPending: true, redelivered: redelivered, &out)
    }

    /// The re-read is done: its log line, and another one if one was asked for meanwhile.
    mutating func endOwnPass(_ out: inout [WorkerAction]) {
        guard let pass = ownPass else { return }
        ownPass = nil
        if pass.listed > 0 { out.append(.log(.init(.info, "re-read own pending entries", pass.fields))) }
        if ownPassAgain {
            ownPassAgain = false
            ownPass = OwnPendingPass(suspects: false)
        }
    }

    /// Entries whose final settlement fell short (`QueueReply.settled`): a checkpoint of theirs
    /// was gone from Redis (a failover to a replica that had not received it), so some of their
    /// notifications have no outcome; the settle recorded the rest as a checkpoint and left them
    /// pending. They are no longer held (`settled` let them go); a re-read of our own pending
    /// entries takes them back with their progress and sends what has no outcome.
    mutating func takeBackShort(_ entries: [String], _ out: inout [WorkerAction]) {
        out.append(.log(.init(.warning, "entries settled short of their count (a checkpoint of theirs is gone: a Redis failover?); taking them back to send what has no outcome",
                              ["count": String(entries.count), "first": entries[0]])))
        if ownPass == nil { ownPass = OwnPendingPass(suspects: false) } else { ownPassAgain = true }
    }

    /// Sends the groups of re-delivered entries whose turn has come (`SuspectPacer`), counting
    /// each one's delivery first (`countDelivery`).
    /// A stop sends every one waiting at once (issue 31: leaving them pending stranded a
    /// restarted worker's take-back for `min_idle_ms` when its consumer name did not come back):
    /// the pacing guards against poison entries over many lives, and a stop is the end of this one.
    mutating func sendSuspects(_ t: WorkerTime, _ out: inout [WorkerAction]) {
        guard suspects.waitingCount > 0 else { return }
        if stopping {
            guard t.nanos < drainDeadlineNanos else { return }
            var byApp: [String: [UInt64]] = [:]
            for serial in suspects.takeAllWaiting() { if let h = held[serial] { byApp[h.app, default: []].append(serial) } }
            for app in byApp.keys.sorted() {
                let serials = byApp[app]!
                request(.countDelivery(serials.map { held[$0]!.entryID }), .countDelivery(app: app, serials: serials), &out)
            }
            return
        }
        for (app, serials) in suspects.nextGroups(now: t.nanos) {
            let ids = serials.compactMap { held[$0]?.entryID }
            request(.countDelivery(ids), .countDelivery(app: app, serials: serials.filter { held[$0] != nil }), &out)
        }
    }

    /// The counts are raised: each entry still ours goes out; one another worker took over
    /// meanwhile (it waited past min-idle) is let go, not sent here.
    mutating func deliveriesCounted(app: String, _ serials: [UInt64], _ counts: [Int?], _ t: WorkerTime, _ out: inout [WorkerAction]) {
        var going: [SendItem] = []
        var lost = 0
        for (serial, count) in zip(serials, counts) {
            guard let h = held[serial] else { continue }
            guard let count else {
                heldNotes -= h.unsettled
                heldChanged(h, by: -h.unsettled)
                held[serial] = nil
                heldByID[h.entryID] = nil
                suspects.answered(tag: serial, app: app)
                lost += 1
                continue
            }
            h.deliveries = count
            h.suspect = false
            // Its campaign cancelled while it waited for its turn (intake saw it active): its
            // notifications are REJECTED Cancelled here, never sent.
            cancelIfCancelled(h, t)
            if h.open == 0 {
                settleIfComplete(h, t)
                suspects.answered(tag: serial, app: app)
                continue
            }
            // This delivery is the last allowed one if it is written (`DeliveryCharge`).
            h.lastChance = charge.exhausted(deliveries: count, written: h.writtenBefore + 1)
            for i in h.tracks.indices where h.tracks[i].phase == .waiting {
                if case .ready(let note) = h.entry.notes[i] { going.append(SendItem(tag: h.tag(i), note: note, entry: h.box)) }
            }
            if going.isEmpty || h.open == 0 && !h.lastChance { suspects.answered(tag: serial, app: app) }
        }
        if lost > 0 { out.append(.log(.init(.info, "re-delivered entries taken over by another worker while waiting; not sent here", ["count": String(lost)]))) }
        send(app: app, going, t, &out)
    }

    /// Every `reclaim_interval_ms`: the group's backlog, due delayed entries promoted, idle
    /// entries of dead consumers reclaimed (when there is room).
    mutating func maintain(_ t: WorkerTime, _ out: inout [WorkerAction]) {
        guard t.nanos >= nextMaintenanceNanos, campaigns.loaded else { return }
        if has({ switch $0 { case .backlog, .promote, .reclaim: return true; default: return false } }) { return }
        nextMaintenanceNanos = t.nanos + UInt64(settings.reclaimIntervalMillis) * 1_000_000
        request(.backlog, .backlog, &out)
        request(.promote(nowMillis: t.wallMillis, max: 1000), .promote, &out)
        if room >= EntryKind.maxNotifications || (room > 0 && notesPerEntry < EntryKind.maxNotifications) {
            request(.reclaim(cursor: reclaimCursor, max: max(1, min(settings.batch, room / max(1, notesPerEntry)))), .reclaim, &out)
        }
    }

    // MARK: - Replies

    /// A request answered.
    mutating func replied(_ purpose: Purpose, _ reply: QueueReply, _ t: WorkerTime, _ out: inout [WorkerAction]) {
        switch (purpose, reply) {
        case (.read(let asked, let reserved, let blockMillis, let sentNanos), .entries(let entries)):
            reservedNotes -= reserved
            counters.read += entries.count
            // Behind or not is the bulk lane's say: fast-lane entries come beside a full read.
            readAnswered(got: entries.reduce(0) { $0 + (FastLane.isFast($1.entryID) ? 0 : 1) }, asked: asked,
                         blockMillis: blockMillis, sentNanos: sentNanos, t)
            take(entries, fromPending: false, redelivered: false, &out)
        case (.readFast(_, let reserved, let blockMillis, let sentNanos), .entries(let entries)):
            fastReadEnded(reserved: reserved)
            counters.read += entries.count
            fastReadAnswered(got: entries.count, blockMillis: blockMillis, sentNanos: sentNanos, t)
            take(entries, fromPending: false, redelivered: false, lane: .fast, &out)
        case (.claim(let boxes, let redelivered, let reserved), .claimed(let answers)):
            reservedNotes -= reserved
            takeIn(boxes, answers, redelivered: redelivered, t, &out)
        case (.settle, .settled(_, _, let short)):
            settled(t, &out)
            if !short.isEmpty { takeBackShort(short, &out) }
        case (.ownPending, .pending(let page)):
            ownPendingListed(page, t, &out)
        case (.takeOwn(let redelivered, let page, let taking, let last), .takenBack(let entries, let considered)):
            takenBack(entries, considered: considered, page: page, taking: taking, last: last, redelivered: redelivered, &out)
        case (.handBack, .handedBack(let n)):
            handedBack(n, &out)
        case (.countDelivery(let app, let serials), .counted(let counts)):
            deliveriesCounted(app: app, serials, counts, t, &out)
        case (.markWritten, .done):
            break
        case (.reclaim, .reclaimed(let cursor, let entries)):
            reclaimCursor = cursor
            let fresh = entries.filter { heldByID[$0.entryID] == nil }
            if !fresh.isEmpty {
                counters.reclaimed += fresh.count
                out.append(.log(.init(.info, "reclaimed idle entries", ["count": String(fresh.count)])))
                take(fresh, fromPending: true, redelivered: true, &out)
            }
        case (.promote, .promoted(let n)):
            counters.promoted += n
        case (.backlog, .backlog(let pending, let lag)):
            backlog = (pending, lag)
        case (.controls, .controls(let controls)):
            controlsRead(controls, &out)
        case (.park(let boxes, let fromPending, let redelivered, let reserved), .parked(let answers)):
            parked(boxes, answers, fromPending: fromPending, redelivered: redelivered, reserved: reserved, &out)
        case (.budget(let c, let want), .granted(let n)):
            budgetGranted(c, want: want, granted: n, t, &out)
        default:
            out.append(.log(.init(.error, "unexpected reply from the queue", ["reply": "\(reply)"])))
        }
    }

    /// A request failed with an error reply (the connection is still up): a settle goes again
    /// after a back-off; anything else is logged and the machine goes on (a read or claim that
    /// failed is found again by a re-read of our own pending entries).
    mutating func failed(_ purpose: Purpose, _ e: QueueError, _ t: WorkerTime, _ out: inout [WorkerAction]) {
        switch purpose {
        case .settle:
            settleFailed(e, t, &out)
            return
        case .read(_, let reserved, _, _), .claim(_, _, let reserved), .park(_, _, _, let reserved):
            reservedNotes -= reserved
            if ownPass == nil { ownPass = OwnPendingPass(suspects: false) }
        case .readFast(_, let reserved, _, _):
            fastReadEnded(reserved: reserved)
            if ownPass == nil { ownPass = OwnPendingPass(suspects: false) }
        case .countDelivery(let app, let serials):
            putBackSuspects(app: app, serials)
        case .markWritten(let add, let drop):
            marksNotSent(add: add, drop: drop, t)
        case .ownPending, .takeOwn:
            ownPass = OwnPendingPass(suspects: ownPass?.suspects ?? false)
        case .handBack:
            handedBack(nil, &out)
        case .budget(let c, _):
            campaigns.nextAskNanos[c] = t.nanos + 100_000_000
        case .controls:
            // Tried again in a second, not every 250 ms (one log line each): until a first read
            // succeeds the worker takes nothing in (a key of the wrong type is the operator's to fix).
            campaigns.nextReadNanos = t.nanos + 1_000_000_000
        default:
            break
        }
        nextReadNanos = t.nanos + 100_000_000
        out.append(.log(.init(.error, "queue operation failed", ["error": e.description])))
    }
}
