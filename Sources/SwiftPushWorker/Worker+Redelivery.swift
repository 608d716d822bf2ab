import PushCore

/// Entries that come back: our own pending entries re-read (at start, after a lost Redis
/// connection), re-delivered entries sent in paced groups, dead letters. See docs/worker.md,
/// "Re-reading and reclaiming" and "Dead letters".
extension Worker {
    /// Entries listed per XPENDING page of a re-read.
    static let pendingPage = 1000

    /// One step of the re-read of our own pending entries: lists them (XPENDING: reads only),
    /// skips those this worker holds, and takes back up to `max` of the others without counting
    /// a delivery. Returns how many it took in. Ends the pass, with one log line, when the list
    /// is done, so a worker holding thousands re-reads them in a few round trips, raising no
    /// counter (issue 23: it re-read them `max_in_flight − held` at a time, each read a delivery).
    func reReadOwnPending(max: Int) throws(QueueError) -> Int {
        while var pass = ownPendingPass {
            let page = try queue.ownPending(after: pass.cursor, max: Self.pendingPage)
            pass.reads += 1
            guard !page.isEmpty else {
                ownPendingPass = nil
                if pass.listed > 0 { log.info("re-read own pending entries", pass.fields) }
                return 0
            }
            let notHeld = page.filter { !heldEntries.contains($0.entryID) }
            let taking = notHeld.prefix(max)
            // Dealt with up to the last one taken (or the whole page): the next listing starts after it.
            let upTo = taking.count < notHeld.count ? page.firstIndex { $0.entryID == taking.last!.entryID }! : page.count - 1
            pass.listed += upTo + 1
            pass.held += page[...upTo].filter { heldEntries.contains($0.entryID) }.count
            pass.cursor = page[upTo].entryID
            ownPendingPass = pass
            if taking.isEmpty { continue }
            let entries = try queue.takeOwn(taking.map(\.entryID))
            ownPendingPass?.reads += 1
            ownPendingPass?.taken += entries.count
            try intake(entries, redelivered: pass.suspects)
            return entries.count
        }
        return 0
    }

    /// Sends the groups of re-delivered entries whose turn has come (`SuspectPacer`), counting
    /// each one's delivery first (`WorkQueue.countDelivery`); an entry another worker has taken
    /// over meanwhile (it waited past min-idle) is let go, not sent here.
    func sendSuspects() {
        guard suspects.waitingCount > 0, !stopping else { return }
        for (app, tags) in suspects.nextGroups(now: MonotonicTime.nanos()) {
            let counts: [Int?]
            do throws(QueueError) {
                counts = try queue.countDelivery(tags.map { held[$0]?.entry.entryID ?? "" })
            } catch {
                suspects.putBack(app: app, tags: tags) { self.held[$0]?.entry.deliveries ?? 0 }
                queueFailed(error)
                return
            }
            var going: [UInt64] = []
            var lost = 0
            let now = MonotonicTime.nanos()
            for (tag, count) in zip(tags, counts) {
                guard let h = held[tag] else { continue }
                if let count {
                    h.entry.deliveries = count
                    h.firstSendNanos = now
                    going.append(tag)
                } else {
                    held.removeValue(forKey: tag)
                    heldEntries.remove(h.entry.entryID)
                    suspects.answered(tag: tag, app: app)
                    lost += 1
                }
            }
            if lost > 0 { log.info("re-delivered entries taken over by another worker while waiting; not sent here", ["count": String(lost)]) }
            send(app: app, tags: going)
        }
    }

    /// FAILED DeadLetter instead of another send: the entry's deliveries would pass
    /// `max_deliveries`. The detail says what is known, so that an operator can tell an entry
    /// that kills its worker, or workers dying faster than APNs answers, from anything else.
    func deadLetter(_ entry: QueueEntry, id: String?) {
        counters.deadLettered += 1
        var o = OutcomeRecord(id: id ?? "", entryID: entry.entryID, kind: .failed)
        o.reason = "DeadLetter"
        o.detail = "\(entry.deliveries) deliveries (max_deliveries \(configuration.maxDeliveries)), each ended without an outcome: "
            + "the worker holding it died or stopped first. A delivery after the first counts only when it is "
            + "sent, in a small group of re-delivered entries: an entry that kills its worker, or workers dying faster "
            + "than APNs answers. Not sent again"
        o.deliveries = entry.deliveries
        o.app = entry.value("app").map { String(decoding: $0, as: UTF8.self) } ?? ""
        record(o)
    }
}
