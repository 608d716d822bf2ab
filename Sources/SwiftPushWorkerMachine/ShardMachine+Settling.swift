/// Outcomes decided, queued for settling, settled: an entry's last outcome settles it whole
/// (acknowledged and deleted); an entry still partly in flight records what is done at most
/// every `checkpoint_ms`, so that a worker killed mid-entry resends only what was in flight or
/// decided since the last checkpoint.
extension ShardMachine {
    // MARK: Outcomes

    /// The outcome skeleton for notification `index` of `h`.
    func outcome(_ h: HeldEntry, _ index: Int, kind: OutcomeRecord.Kind, reason: String = "", detail: String = "") -> OutcomeRecord {
        let e = h.entry
        let slot = index < e.notes.count ? e.notes[index] : nil
        var o = OutcomeRecord(id: slot?.id ?? e.id ?? "", entryID: e.entryID, kind: kind)
        o.app = e.app
        o.campaign = e.campaign
        o.reason = reason
        o.detail = detail
        o.deliveries = h.deliveries
        o.attempts = h.earlierDeliveries
        o.maybeDelivered = h.earlierDeliveries > 0 && kind != .accepted
        if let token = slot?.token { o.token = e.text(token) }
        return o
    }

    /// The outcome every notification of `h` shares (an entry-level decision).
    func outcome(_ h: HeldEntry, kind: OutcomeRecord.Kind, reason: String, detail: String) -> OutcomeRecord {
        var o = OutcomeRecord(id: h.entry.id ?? "", entryID: h.entryID, kind: kind)
        o.app = h.app
        o.campaign = h.entry.campaign
        o.reason = reason
        o.detail = detail
        o.deliveries = h.deliveries
        o.attempts = h.earlierDeliveries
        o.maybeDelivered = h.earlierDeliveries > 0 && kind != .accepted
        return o
    }

    /// Counts a decided outcome.
    mutating func count(_ kind: OutcomeRecord.Kind, _ n: Int = 1) {
        switch kind {
        case .accepted: counters.accepted += n
        case .rejected: counters.rejected += n
        case .failed: counters.failed += n
        }
    }

    /// Notification `index` of `h` has its outcome `o`.
    mutating func decide(_ h: HeldEntry, _ index: Int, _ o: OutcomeRecord, _ t: WorkerTime) {
        guard h.tracks[index].phase != .decided && h.tracks[index].phase != .left else { return }
        h.tracks[index].phase = .decided
        h.open -= 1
        count(o.kind)
        if o.status == 410 || h.lastChance { h.urgent = true }
        // Acceptances are counted in a record (their ids listed for a batch), not written one by one.
        if o.kind == .accepted && (h.entry.kind != .single || settings.outcomeFormat == 3) {
            h.accepted.append((index, o.id))
            h.acceptedLatency.append(o.latencyUs)
        } else {
            h.others.append(.init(index: index, outcome: o))
        }
        noteDecided(h, t)
    }

    /// Notification `index` of `h` was accepted, and is counted in a record (`decide`'s way for
    /// an acceptance, without an `OutcomeRecord`).
    mutating func acceptedInRecord(_ h: HeldEntry, _ index: Int, id: String, latencyUs: Int64, _ t: WorkerTime) {
        guard h.tracks[index].phase != .decided && h.tracks[index].phase != .left else { return }
        h.tracks[index].phase = .decided
        h.open -= 1
        counters.accepted += 1
        h.accepted.append((index, id))
        h.acceptedLatency.append(latencyUs)
        noteDecided(h, t)
    }

    /// Every notification of `h` still open has outcome `o`: one group (a multicast's rest), or
    /// one outcome each (a batch's elements, a single entry's one).
    mutating func decideAll(_ h: HeldEntry, _ o: OutcomeRecord, _ t: WorkerTime) {
        if h.entry.kind == .multicast || h.entry.notes.isEmpty && h.entry.kind != .batch {
            let n = h.open
            for i in h.tracks.indices where h.tracks[i].phase != .decided && h.tracks[i].phase != .left {
                h.tracks[i].phase = .decided
            }
            h.open = 0
            count(o.kind, n)
            h.rest = o
            h.restCount = n
            noteDecided(h, t)
            return
        }
        for i in h.tracks.indices where h.tracks[i].phase == .waiting || h.tracks[i].phase == .resend {
            var each = outcome(h, i, kind: o.kind, reason: o.reason, detail: o.detail)
            each.status = o.status
            decide(h, i, each, t)
        }
    }

    /// Queues `h`'s final settlement once every notification has its outcome; an entry with
    /// notifications left pending (a stop) is settled as a checkpoint instead, later.
    mutating func settleIfComplete(_ h: HeldEntry, _ t: WorkerTime) {
        guard h.open == 0, h.inFlight == 0, !h.finalQueued else { return }
        if h.tracks.contains(where: { $0.phase == .left }) { return }
        queueSettlement(h, final: true, t)
    }

    /// `h` has an outcome decided and not queued: its checkpoint is due `checkpoint_ms` after
    /// the oldest such (only these entries are looked at for checkpoints: with thousands of
    /// single entries held, walking every one at each event was the loop's largest cost).
    mutating func noteDecided(_ h: HeldEntry, _ t: WorkerTime) {
        guard h.decidedSinceNanos == nil else { return }
        h.decidedSinceNanos = t.nanos
        decidedUnqueued.insert(h.serial)
    }

    /// Checkpoints: entries whose oldest unqueued outcome is `checkpoint_ms` old.
    mutating func checkpoints(_ t: WorkerTime, _ out: inout [WorkerAction]) {
        if decidedUnqueued.isEmpty { return }
        let due = UInt64(settings.checkpointMillis) * 1_000_000
        for serial in decidedUnqueued {
            guard let h = held[serial] else { decidedUnqueued.remove(serial); continue }
            guard let since = h.decidedSinceNanos, t.nanos >= since + due || h.urgent, !h.finalQueued, h.hasUnqueued else { continue }
            counters.checkpoints += 1
            queueSettlement(h, final: false, t)
        }
    }

    /// Moves `h`'s decided outcomes into a settlement (merged with one of the same entry that is
    /// queued and not yet sent: one entry appears once per settle call).
    mutating func queueSettlement(_ h: HeldEntry, final: Bool, _ t: WorkerTime) {
        let e = h.entry
        let destination: EntrySettlement.Destination
        switch (e.kind, settings.outcomeFormat) {
        case (.single, 1): destination = .format1
        case (.single, 2): destination = .format2
        default: destination = .record
        }
        var s = EntrySettlement(entryID: e.entryID, kind: e.kind, destination: destination, count: max(1, e.count), final: final,
                                app: e.app, campaign: e.campaign, id: e.kind == .batch ? nil : e.id, deliveries: h.deliveries)
        // By kind and reason: an entry has one or a few, so a short list searched in place
        // (a dictionary keyed by an interpolated string cost an allocation and a hash per entry).
        var tally: [OutcomeTally] = []
        func add(_ kind: OutcomeRecord.Kind, _ reason: String, _ n: Int, _ latencies: [Int64]) {
            if let k = tally.firstIndex(where: { $0.kind == kind && $0.reason == reason }) {
                tally[k].count += n
                tally[k].latenciesUs += latencies
            } else {
                tally.append(OutcomeTally(app: e.app, kind: kind, reason: reason, count: n, latenciesUs: latencies))
            }
        }
        let accepted = zip(h.accepted, h.acceptedLatency).sorted { $0.0.index < $1.0.index }
        s.accepted = accepted.map(\.0.index)
        if e.kind == .batch { s.acceptedIDs = accepted.map(\.0.id) }
        if !accepted.isEmpty { add(.accepted, "", accepted.count, accepted.map(\.1).filter { $0 > 0 }) }
        s.others = h.others.sorted { $0.index < $1.index }
        for o in s.others { add(o.outcome.kind, o.outcome.reason, 1, o.outcome.latencyUs > 0 ? [o.outcome.latencyUs] : []) }
        s.rest = h.rest
        if let r = h.rest { add(r.kind, r.reason, h.restCount, []) }
        s.delayed = h.delayed
        if final { s.repeats = e.repeats }
        let notes = accepted.count + s.others.count + h.restCount + (h.delayed?.pieces.count ?? 0)
        h.accepted.removeAll()
        h.acceptedLatency.removeAll()
        h.others.removeAll()
        h.rest = nil
        h.restCount = 0
        h.delayed = nil
        h.decidedSinceNanos = nil
        decidedUnqueued.remove(h.serial)
        if final {
            h.finalQueued = true
            forgetWritten(h, t)
        }
        let urgent = h.urgent
        h.urgent = false
        let queued = QueuedSettlement(settlement: s, notes: notes, tally: tally, queuedNanos: t.nanos)
        unsettledNotes += notes
        // One lookup instead of a search of the queue per outcome (with thousands of single
        // entries queued, that search was the loop's largest cost).
        if let a = mergeable[e.entryID], case let k = a - unsettledBase, k >= settling, k < unsettled.count,
           unsettled[k].settlement.entryID == e.entryID {
            unsettled[k].merge(queued)
            if urgent { urgentPosition = max(urgentPosition, a) }
        } else {
            mergeable[e.entryID] = unsettledBase + unsettled.count
            if urgent { urgentPosition = unsettledBase + unsettled.count }
            unsettled.append(queued)
        }
    }

    // MARK: Settling

    /// Sends the next chunk of settlements (one atomic script call) without waiting, so that
    /// Redis runs it while the machine reads, claims and sends on the other connection; one
    /// settle is in flight at a time.
    ///
    /// When the worker keeps up with its stream, a settle goes the moment the previous one is
    /// answered (or at once, with none in flight): outcomes decided meanwhile gather behind the
    /// one in flight, as writes do behind an unacknowledged one without Nagle's delay, so a lone
    /// notification's outcome is recorded one round trip after its answer (issue 31: waiting
    /// for company cost every lone notification up to 10 ms) and a busy worker's settles still
    /// carry what a round trip gathers. When it is behind (`behind`: a backlog, drained at full
    /// speed), a settle also waits for company: a quarter of max_in_flight queued, a full call,
    /// or the oldest queued coalesceMillis ago; Redis's cost per call is mostly the same
    /// whatever it carries, and a notification that waited in the backlog loses nothing to
    /// 10 ms more. A 410 queued (`HeldEntry.urgent`) and a stop never wait.
    mutating func settleNext(_ t: WorkerTime, _ out: inout [WorkerAction]) {
        guard settling == 0, !unsettled.isEmpty, t.nanos >= settleRetryNanos else { return }
        if settleGathers && unsettledNotes < min(fillTarget, MachineSettings.settleNotifications)
            && unsettled.count < MachineSettings.settleEntries && t.nanos < unsettled[0].queuedNanos + coalesceNanos {
            return
        }
        var n = 0, notes = 0
        while n < unsettled.count && n < MachineSettings.settleEntries && (n == 0 || notes + unsettled[n].notes <= MachineSettings.settleNotifications) {
            notes += unsettled[n].notes
            n += 1
        }
        settling = n
        request(.settle(unsettled[..<n].map(\.settlement)), .settle(count: n), lane: .settle, &out)
    }

    /// Whether the next settle waits for company (`settleNext`): only when the worker is behind
    /// its stream, not stopping, and no 410 is queued.
    var settleGathers: Bool { behind && !stopping && urgentPosition < unsettledBase }

    /// The settle in flight was applied: its entries' outcomes are recorded; an entry settled
    /// whole is no longer held.
    mutating func settled(_ t: WorkerTime, _ out: inout [WorkerAction]) {
        // By index: a settlement is a large value, and copying each one out cost retains.
        for k in 0..<settling {
            let entryID = unsettled[k].settlement.entryID
            if mergeable[entryID] == unsettledBase + k { mergeable[entryID] = nil }
            guard let serial = heldByID[entryID], let h = held[serial] else { continue }
            if unsettled[k].settlement.final {
                if h.lastChance { suspects.answered(tag: serial, app: h.app) }
                heldNotes -= h.unsettled
                heldChanged(h, by: -h.unsettled)
                held[serial] = nil
                heldByID[entryID] = nil
            } else {
                h.unsettled -= unsettled[k].notes
                heldNotes -= unsettled[k].notes
                heldChanged(h, by: -unsettled[k].notes)
            }
        }
        out.append(.recorded(unsettled[..<settling].flatMap(\.tally)))
        unsettledNotes -= unsettled[..<settling].reduce(0) { $0 + $1.notes }
        unsettled.removeFirst(settling)
        unsettledBase += settling
        settling = 0
        settleFailures = 0
    }

    /// The settle in flight failed (an error reply: a write that failed midway): it goes again
    /// after a back-off (the script is idempotent).
    mutating func settleFailed(_ e: QueueError, _ t: WorkerTime, _ out: inout [WorkerAction]) {
        settling = 0
        settleFailures += 1
        let delay = UInt64(min(5000, 100 << min(settleFailures - 1, 6))) * 1_000_000
        settleRetryNanos = t.nanos + delay
        out.append(.log(.init(.error, "queue operation failed", ["error": e.description, "retry_ms": String(delay / 1_000_000)])))
    }
}

extension QueuedSettlement {
    /// Adds `other`'s outcomes (of the same entry) to this one.
    mutating func merge(_ other: QueuedSettlement) {
        var pairs = zip(settlement.accepted, settlement.kind == .batch ? settlement.acceptedIDs : settlement.accepted.map { _ in "" })
            .map { ($0, $1) }
        pairs += zip(other.settlement.accepted, other.settlement.kind == .batch ? other.settlement.acceptedIDs : other.settlement.accepted.map { _ in "" })
            .map { ($0, $1) }
        pairs.sort { $0.0 < $1.0 }
        settlement.accepted = pairs.map(\.0)
        if settlement.kind == .batch { settlement.acceptedIDs = pairs.map(\.1) }
        settlement.others = (settlement.others + other.settlement.others).sorted { $0.index < $1.index }
        settlement.rest = other.settlement.rest ?? settlement.rest
        if let d = other.settlement.delayed {
            if settlement.delayed == nil { settlement.delayed = d } else { settlement.delayed!.pieces += d.pieces }
        }
        settlement.final = settlement.final || other.settlement.final
        settlement.repeats = max(settlement.repeats, other.settlement.repeats)
        notes += other.notes
        tally += other.tally
    }
}
