import PushCore

/// The clients' answers: what a send took, each result turned into an outcome, a resend or a
/// delay (`ResultPolicy` decides), and credentials APNs refuses (one probe at a time, the rest
/// rejected unsent).
extension ShardMachine {
    /// What the client of `app` took of a send.
    mutating func submitted(app: String, _ report: SubmitReport, _ t: WorkerTime, _ out: inout [WorkerAction]) {
        counters.sent += report.taken.count
        for (tag, violation) in report.refused {
            guard let h = held[tag >> 10], returned(h, tag) else { continue }
            let i = Int(tag & 1023)
            // The library refused it (its rules beyond the worker's): final, with its message.
            let r = EntryRejection(violation)
            decide(h, i, outcome(h, i, kind: .rejected, reason: r.reason, detail: r.detail), t)
            settleIfComplete(h, t)
        }
        for tag in report.notTaken {
            guard let h = held[tag >> 10], returned(h, tag) else { continue }
            let i = Int(tag & 1023)
            h.tracks[i].sends &-= 1
            if report.closing && stopping {
                h.tracks[i].phase = .left
                h.open -= 1
                settleIfComplete(h, t)
            } else {
                // No room after all (or closing): it waits to be sent again.
                scheduleResend(h, i, at: t.nanos + 50_000_000)
            }
        }
    }

    /// Takes notification `tag` of `h` back from the client (no result will come for it).
    private mutating func returned(_ h: HeldEntry, _ tag: UInt64) -> Bool {
        let i = Int(tag & 1023)
        guard i < h.tracks.count, h.tracks[i].phase == .inFlight else { return false }
        h.inFlight -= 1
        // One on its last chance ends its group when its outcomes are settled (`settled`).
        if h.inFlight == 0 && suspects.outstandingCount > 0 && !h.lastChance { suspects.answered(tag: h.serial, app: h.app) }
        return true
    }

    /// Applies the policy to each result.
    mutating func handle(_ results: [NoteResult], _ t: WorkerTime, _ out: inout [WorkerAction]) {
        for r in results {
            guard let h = held[r.tag >> 10], returned(h, r.tag) else { continue }
            let i = Int(r.tag & 1023)
            h.tracks[i].attempts &+= UInt16(clamping: r.attempts)
            guard case .ready(let note) = h.entry.notes[i] else { continue }
            if r.reason.retryClass == .refused || (!refusals.isEmpty && refusals[h.app] != nil) {
                noteCredentials(h, note, status: r.status, reason: r.reason, &out)
            }
            let decision = settings.policy.decide(outcome: r.kind, reason: r.reason, sends: Int(h.tracks[i].sends),
                                                  retries: h.entry.retries, notAfter: note.notAfter, nowMillis: t.wallMillis,
                                                  stopping: stopping)
            switch decision {
            case .record where r.kind == .accepted && (h.entry.kind != .single || settings.outcomeFormat == 3):
                // Counted in a record: only the index, a batch element's id and the latency are
                // kept (building a whole OutcomeRecord, the token's text included, for each of
                // a multicast's acceptances was a tenth of the worker's instructions).
                acceptedInRecord(h, i, id: h.entry.kind == .batch ? note.id : "",
                                 latencyUs: Int64((t.nanos &- h.tracks[i].firstSendNanos) / 1000), t)
            case .record:
                var o = outcome(h, i, kind: r.kind)
                o.status = r.status
                o.reason = r.reason == .unknown && !r.reasonText.isEmpty ? r.reasonText : r.reason.text
                if r.reasonText != o.reason { o.detail = r.reasonText }
                if h.entry.kind == .single { o.apnsID = note.apnsID.description }
                o.attempts += Int(h.tracks[i].attempts)
                o.timestampMs = r.timestampMs
                o.latencyUs = Int64((t.nanos &- h.tracks[i].firstSendNanos) / 1000)
                o.maybeDelivered = o.maybeDelivered || (r.kind == .failed && r.reason.retryClass == .unknown)
                decide(h, i, o, t)
            case .resend(let afterMillis):
                counters.resent += 1
                scheduleResend(h, i, at: t.nanos + UInt64(afterMillis) * 1_000_000)
            case .delay(let due):
                counters.delayed += 1
                park(h, i, dueMillis: due, t)
            case .leavePending:
                h.tracks[i].phase = .left
                h.open -= 1
            }
            settleIfComplete(h, t)
        }
    }

    /// Notification `i` of `h` waits to be sent again at `at`.
    mutating func scheduleResend(_ h: HeldEntry, _ i: Int, at: UInt64) {
        h.tracks[i].phase = .resend
        h.tracks[i].resendAtNanos = at
        waitingResend.append(h.tag(i))
    }

    /// Sends again the notifications whose time has come (all of them when stopping), by app.
    mutating func resendDue(_ t: WorkerTime, _ out: inout [WorkerAction]) {
        if waitingResend.isEmpty { return }
        var due: [String: [SendItem]] = [:]
        var later: [UInt64] = []
        for tag in waitingResend {
            guard let h = held[tag >> 10] else { continue }
            let i = Int(tag & 1023)
            guard h.tracks[i].phase == .resend else { continue }
            guard h.tracks[i].resendAtNanos <= t.nanos || stopping else { later.append(tag); continue }
            if case .ready(let note) = h.entry.notes[i] { due[h.app, default: []].append(SendItem(tag: tag, note: note, entry: h.box)) }
        }
        waitingResend = later
        for app in due.keys.sorted() { send(app: app, due[app]!, t, &out) }
    }

    /// Notification `i` of `h` got a 429 that outlived the client's retries: it leaves the entry
    /// for the delayed set (a new entry of the same kind, `origin` naming this one's origin).
    /// `trip`: it counts as a trip (`retries` + 1); a scheduled entry's does not
    /// (ShardMachine+Schedule.swift).
    mutating func park(_ h: HeldEntry, _ i: Int, dueMillis: Int64, _ t: WorkerTime, trip: Bool = true) {
        let e = h.entry
        if h.delayed == nil {
            // The parked tokens go back in the text form (`tokens`), whichever form the entry had.
            let skip: Set<[UInt8]> = [Array("retries".utf8), Array("origin".utf8), Array("tokens".utf8), Array("tokens_bin".utf8),
                                      Array("notifications".utf8)]
            var fields = e.raw.fields.filter { !skip.contains($0.name) }.map { DelayedPart.Field(name: $0.name, value: $0.value) }
            fields.append(.init(name: Array("retries".utf8), value: Array(String(e.retries + (trip ? 1 : 0)).utf8)))
            fields.append(.init(name: Array("origin".utf8), value: Array((e.origin ?? e.entryID).utf8)))
            let join: String
            switch e.kind {
            case .single: join = ""
            case .multicast: join = "tokens"
            case .batch: join = "notifications"
            }
            h.delayed = DelayedPart(dueMillis: dueMillis, member: "\(e.entryID):\(i)", joinField: join, fields: fields, pieces: [])
        }
        let piece: [UInt8]
        switch e.kind {
        case .single: piece = []
        case .multicast: piece = e.notes[i].token.map { Array(e.storage[$0]) } ?? []
        case .batch: piece = i < e.elements.count ? Array(e.storage[e.elements[i]]) : []
        }
        h.delayed!.pieces.append(.init(index: i, bytes: piece))
        h.tracks[i].phase = .decided
        h.open -= 1
        noteDecided(h, t)
    }

    // MARK: Refused credentials

    /// The key a refusal is kept under: the note's topic ("" for the app's default).
    private func topicKey(_ note: WorkNote) -> [UInt8] { Array((note.topic ?? "").utf8) }

    /// `items` of `app` less those whose app and topic APNs refuses the credentials of, which are
    /// recorded REJECTED unsent; one of them (the probe) still goes, whenever none is out, to
    /// find out when APNs accepts the credentials again.
    mutating func sendingPastRefusals(app: String, _ items: [SendItem], _ t: WorkerTime) -> [SendItem] {
        guard var byTopic = refusals[app] else { return items }
        var going: [SendItem] = []
        going.reserveCapacity(items.count)
        for item in items {
            guard let h = held[item.tag >> 10] else { continue }
            let i = Int(item.tag & 1023)
            let key = topicKey(item.note)
            guard var refusal = byTopic[key] else {
                going.append(item)
                continue
            }
            if let probe = refusal.probe, probe != item.tag, let ph = held[probe >> 10], [.inFlight, .resend].contains(ph.tracks[Int(probe & 1023)].phase) {
                var o = outcome(h, i, kind: .rejected)
                o.status = refusal.status
                o.reason = refusal.reason
                let topic = item.note.topic ?? reader.apps[app]?.topics.first ?? ""
                o.detail = "not sent: APNs refuses this app's credentials for topic \(topic) "
                    + "(\(refusal.reason)); while it does, one notification at a time is sent to find out when it accepts them again"
                if h.entry.kind == .single { o.apnsID = item.note.apnsID.description }
                if h.tracks[i].phase == .resend || h.tracks[i].phase == .waiting { decide(h, i, o, t) }
                settleIfComplete(h, t)
                continue
            }
            refusal.probe = item.tag
            byTopic[key] = refusal
            going.append(item)
        }
        refusals[app] = byTopic
        return going
    }

    /// What an answer says about its app's credentials: a refusal starts (or goes on), any other
    /// answer from APNs ends it.
    mutating func noteCredentials(_ h: HeldEntry, _ note: WorkNote, status: Int32, reason: APNsReason, _ out: inout [WorkerAction]) {
        let key = topicKey(note)
        if reason.retryClass == .refused {
            // A refusal of one sent before it started leaves the probe in flight the probe.
            let probe = refusals[h.app]?[key]?.probe
            refusals[h.app, default: [:]][key] = CredentialRefusal(status: status, reason: reason.text, probe: probe)
            out.append(.apnsEvent(.credentialsRefused, app: h.app, detail: "\(status) \(reason.text)"))
        } else if status != 0, refusals[h.app]?.removeValue(forKey: key) != nil {
            if refusals[h.app]?.isEmpty == true { refusals[h.app] = nil }
            let topic = note.topic ?? reader.apps[h.app]?.topics.first ?? ""
            out.append(.log(.init(.info, "APNs accepts the credentials again", ["app": h.app, "topic": topic])))
        }
    }
}
