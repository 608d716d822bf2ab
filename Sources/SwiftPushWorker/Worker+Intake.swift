import CSwiftPushABI
import PushCore
import PushClientCore

/// Taking entries in: claim their ids, settle the ones that cannot be sent, send the rest.
extension Worker {
    /// Claims, checks and sends `entries` (read, re-read or reclaimed). `redelivered` entries
    /// (a previous holder ended without their outcome) wait their turn in `suspects` instead of
    /// going out at once. With `thenReadAhead`, the read of the next batch is begun right after
    /// the claim (see `readBatch`).
    func intake(_ entries: [QueueEntry], redelivered: Bool = false, thenReadAhead: Bool = false) throws(QueueError) {
        // The settle in flight first (Redis ran it before this read; its reply is waiting): an
        // entry it acknowledged that the read delivers again (a rewound group) is then taken in
        // as new — its guard says it is recorded — instead of being skipped as one we hold.
        finishSettling()
        // A reclaim can return an entry this worker still holds (slow, not dead): keep ours.
        let fresh = entries.filter { !heldEntries.contains($0.entryID) }
        if fresh.isEmpty { return }
        let ids = fresh.map { EntryParser.notificationID(of: $0) }
        try queue.beginClaim(zip(ids, fresh).map { (id: $0, entryID: $1.entryID) })
        if thenReadAhead {
            let next = room(taking: fresh.count)
            if next > 0 {
                try queue.beginReadNew(max: next)
                readAheadCount = next
            }
        }
        // While Redis claims: send the next settle (Redis runs it after the claim, while the
        // notifications go out), and check the entries (pure work, no I/O).
        beginSettling()
        let parsed = fresh.map { parser.parse($0) }
        let states = try queue.finishClaim()
        counters.read += fresh.count
        var toSend: [String: [(QueueEntry, QueuedNotification)]] = [:]
        let nowSeconds = wallMillis() / 1000
        for (i, entry) in fresh.enumerated() {
            heldEntries.insert(entry.entryID)
            switch states[i] {
            case .recorded:
                counters.acknowledgedOnly += 1
                unsettled.append(.acknowledge(entryID: entry.entryID))
                continue
            case .duplicate(let owner):
                counters.duplicates += 1
                reject(entry, id: ids[i] ?? "", EntryRejection("DuplicateId", "id '\(ids[i] ?? "")' was already used by entry \(owner)"))
                continue
            case .send:
                break
            }
            // A re-delivered entry's count is of the deliveries before this one (this one counts
            // when it is sent); any other entry's includes this one.
            if entry.deliveries + (redelivered ? 1 : 0) > configuration.maxDeliveries {
                deadLetter(entry, id: ids[i])
                continue
            }
            switch parsed[i] {
            case .failure(let rejection):
                reject(entry, id: ids[i] ?? "", rejection)
            case .success(let note):
                if let notAfter = note.notAfter, nowSeconds > notAfter {
                    var o = outcome(for: entry, note: note, kind: .failed)
                    o.reason = "Expired"
                    o.detail = "not_after \(notAfter) has passed; not sent"
                    record(o)
                } else if redelivered {
                    let tag = nextTag
                    nextTag += 1
                    held[tag] = Held(entry: entry, note: note, firstSendNanos: MonotonicTime.nanos())
                    suspects.add(tag: tag, app: note.app, deliveries: entry.deliveries)
                } else {
                    toSend[note.app, default: []].append((entry, note))
                }
            }
        }
        for (app, items) in toSend {
            var tags: [UInt64] = []
            for (entry, note) in items {
                let tag = nextTag
                nextTag += 1
                held[tag] = Held(entry: entry, note: note, firstSendNanos: MonotonicTime.nanos())
                tags.append(tag)
            }
            send(app: app, tags: tags)
        }
    }

    /// A REJECTED outcome for an entry that cannot be sent.
    func reject(_ entry: QueueEntry, id: String, _ rejection: EntryRejection) {
        var o = OutcomeRecord(id: id, entryID: entry.entryID, kind: .rejected)
        o.reason = rejection.reason
        o.detail = rejection.detail
        o.deliveries = entry.deliveries
        o.app = entry.value("app").map { String(decoding: $0, as: UTF8.self) } ?? ""
        record(o)
    }

    /// Queues an outcome for settling.
    func record(_ o: OutcomeRecord) {
        switch o.kind {
        case .accepted: counters.accepted += 1
        case .rejected: counters.rejected += 1
        case .failed: counters.failed += 1
        }
        unsettled.append(.record(o))
    }

    /// The outcome skeleton for a parsed entry.
    func outcome(for entry: QueueEntry, note: QueuedNotification, kind: OutcomeRecord.Kind) -> OutcomeRecord {
        var o = OutcomeRecord(id: note.id, entryID: entry.entryID, kind: kind)
        o.app = note.app
        o.token = String(decoding: note.token, as: UTF8.self)
        o.deliveries = entry.deliveries
        return o
    }

    /// Sends the held notifications `tags` through `app`'s client in one batch: their bytes are
    /// packed into one buffer, so a batch costs one crossing into the client.
    func send(app: String, tags: [UInt64]) {
        let tags = refusals.isEmpty ? tags : sendingPastRefusals(app: app, tags: tags)
        guard let client = clients.clients[app], !tags.isEmpty else { return }
        var arena: [UInt8] = []
        var spans: [(token: Range<Int>, topic: Range<Int>, payload: Range<Int>, collapse: Range<Int>?, apnsID: Range<Int>)] = []
        func put(_ bytes: some Sequence<UInt8>) -> Range<Int> {
            let start = arena.count
            arena.append(contentsOf: bytes)
            return start..<arena.count
        }
        let notes = tags.map { held[$0]!.note }
        for n in notes {
            spans.append((put(n.token), put(n.topic), put(n.payload), n.collapseID.map(put), put(n.apnsID.utf8)))
        }
        var start = 0
        arena.withUnsafeBufferPointer { buffer in
            let base = UnsafeRawPointer(buffer.baseAddress!).assumingMemoryBound(to: CChar.self)
            var batch = [push_notification](repeating: push_notification(), count: tags.count)
            for (i, tag) in tags.enumerated() {
                let n = notes[i]
                let s = spans[i]
                var p = push_notification()
                p.struct_size = UInt32(MemoryLayout<push_notification>.size)
                p.push_type = n.pushType.rawValue
                p.priority = n.priority
                if let e = n.expiration {
                    p.flags = PUSH_NOTIFICATION_HAS_EXPIRATION.rawValue
                    p.expiration = e
                }
                p.tag = tag
                (p.device_token, p.device_token_len) = (base + s.token.lowerBound, s.token.count)
                (p.topic, p.topic_len) = (base + s.topic.lowerBound, s.topic.count)
                (p.payload, p.payload_len) = (base + s.payload.lowerBound, s.payload.count)
                if let c = s.collapse, !c.isEmpty { (p.collapse_id, p.collapse_id_len) = (base + c.lowerBound, c.count) }
                (p.apns_id, p.apns_id_len) = (base + s.apnsID.lowerBound, s.apnsID.count)
                batch[i] = p
            }
            while start < tags.count {
                let r = batch.withUnsafeBufferPointer { client.send($0.baseAddress! + start, count: tags.count - start, timeoutMillis: 0) }
                for t in tags[start..<(start + r.accepted)] { held[t]?.sends += 1 }
                counters.sent += r.accepted
                start += r.accepted
                guard let error = r.error else { break }
                let tag = tags[start]
                if error.status == .queueFull || error.status == .closed {
                    // No room after all (or closing): the rest waits to be resent.
                    for t in tags[start...] { scheduleResend(t, afterMillis: 50) }
                    break
                }
                // The library refused this one (its rules beyond ours): final, with its message.
                let h = held.removeValue(forKey: tag)!
                if suspects.outstandingCount > 0 { suspects.answered(tag: tag, app: app) }
                var o = outcome(for: h.entry, note: h.note, kind: .rejected)
                o.reason = EntryRejection(NotificationRules.Violation(error.status, error.description)).reason
                o.detail = error.description
                record(o)
                start += 1
            }
        }
    }

    /// Marks a held notification to be sent again after `afterMillis`.
    func scheduleResend(_ tag: UInt64, afterMillis: Int) {
        held[tag]?.resendAtNanos = MonotonicTime.nanos() + UInt64(afterMillis) * 1_000_000
        waitingResend.append(tag)
    }
}
