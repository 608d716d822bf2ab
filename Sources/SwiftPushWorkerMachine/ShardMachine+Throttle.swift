/// Throttled campaigns in the machine (docs/worker.md, "Steering a campaign"): a throttled
/// campaign's notifications, claimed, wait in the worker until a budget from the shard's token
/// bucket in Redis (`RedisCampaignScripts.budget`, shared by every worker) lets them go; what
/// would make them wait longer than a couple of seconds is not held (it would take room other
/// campaigns need) but set aside in the delayed set, due a little before the rate would reach it,
/// and promoted by this worker then.
extension ShardMachine {
    /// The most notifications of throttled campaign `c` held waiting for budget: two seconds of
    /// its rate, at most a quarter of `max_in_flight` (the rest is for other campaigns), and at
    /// least one entry.
    func throttleCap(_ rate: Double) -> Int { max(entryRoom, min(Int(rate * 2), settings.maxInFlight / 4)) }

    /// When an entry of `c` with `notes` notifications, read while this worker holds `holding`
    /// of `c`, is due back from the delayed set (UNIX ms), with a wake-up for this worker to
    /// promote it then: the maintenance promotes only every `reclaim_interval_ms` (5 s by
    /// default), and by then everything held had long been sent and the campaign stood still.
    /// Its turn comes once what is held and what was set aside before has gone, at the rate:
    /// the soonest the fleet can send it. Sooner than this worker will (the workers share one
    /// bucket: two get about half of it each), so at worst it comes back before there is room
    /// and is set aside again, later; a due time from a share of the rate this worker measured
    /// was tried and left the campaign standing still when the share moved (the bucket splits
    /// unevenly between askers, and another worker may read what comes back). It is due back
    /// earlier still by half the time the rest of a full hold (`throttleCap`) lasts, so that it
    /// is promoted, read and claimed again while some is still held.
    mutating func throttleDue(_ c: String, notes: Int, holding: Int, rate: Double) -> Int64 {
        let now = campaigns.wallMillis
        let start = max(campaigns.deferredUntilMillis[c] ?? 0, now + Int64(Double(holding) / rate * 1000))
        campaigns.deferredUntilMillis[c] = start + Int64(Double(notes) / rate * 1000)
        let early = Int64(Double(max(0, throttleCap(rate) - notes)) / rate * 500)
        let due = max(now, start - early)
        // 2 ms late, as for send_at: the promotion's wall clock must have reached it. One wake-up
        // for entries due within 20 ms of each other (one promotion takes up to 1,000).
        let wake = campaigns.stepNanos + UInt64(due - now + 2) * 1_000_000
        let at = scheduledWakes.firstIndex { $0 >= wake } ?? scheduledWakes.count
        if at == scheduledWakes.count || scheduledWakes[at] - wake > 20_000_000 { scheduledWakes.insert(wake, at: at) }
        return due
    }

    /// Holds `h` for budget when its campaign is throttled: true when held (not sent now).
    mutating func holdForBudget(_ h: HeldEntry) -> Bool {
        guard campaigns.decision(h.entry.campaign) == .throttle else { return false }
        let c = h.entry.campaign
        campaigns.waiting[c, default: []].append(h.serial)
        campaigns.waitingNotes[c, default: 0] += h.tracks.filter { $0.phase == .waiting }.count
        return true
    }

    /// Asks for budget for every throttled campaign with notifications waiting (one request in
    /// flight per campaign); a campaign no longer throttled lets its notifications go (or
    /// cancels them); a stop leaves them, for the hand-back.
    mutating func askBudgets(_ t: WorkerTime, _ out: inout [WorkerAction]) {
        for c in campaigns.waiting.keys.sorted() {
            let decision = campaigns.decision(c)
            // Paused while throttled: what is held still goes at the rate (a pause moves aside
            // what is read after it).
            let throttled = decision == .throttle || decision == .park && campaigns.controls[c]?.rate != nil
            if stopping || !throttled {
                releaseWaiting(c, limit: Int.max, cancel: decision == .cancel, leave: stopping, t, &out)
                continue
            }
            guard t.nanos >= campaigns.nextAskNanos[c] ?? 0,
                  !has({ if case .budget(c, _) = $0 { return true }; return false }) else { continue }
            let rate = campaigns.controls[c]?.rate ?? 1
            // Budget is spent when the client writes, not when it is given the notifications:
            // with a tenth of a second's worth in flight (a connection still opening, a slow
            // APNs), no more is asked for, or what queued in the client would go out at once.
            if inFlight(of: c) >= max(5, Int(rate / 10)) {
                campaigns.nextAskNanos[c] = t.nanos + 10_000_000
                continue
            }
            let want = min(campaigns.waitingNotes[c] ?? 0, max(1, Int(rate / 4)))
            if want == 0 { continue }
            request(.budget(campaign: c, want: want), .budget(c, want: want), lane: .settle, &out)
        }
    }

    /// The budget answered: `granted` of the `want` notifications go now, the next ask waits for
    /// the rest to be earned (10–50 ms).
    mutating func budgetGranted(_ c: String, want: Int, granted: Int, _ t: WorkerTime, _ out: inout [WorkerAction]) {
        releaseWaiting(c, limit: granted, cancel: false, leave: false, t, &out)
        let rate = campaigns.controls[c]?.rate ?? 1
        let missing = Double(max(0, want - granted))
        // At most 50 ms: the bucket holds a tenth of a second's worth, and what a worker does
        // not take in time is lost to the whole fleet (the workers share one bucket).
        let waitNanos = granted >= want ? 0 : UInt64(min(50_000_000, max(10_000_000, missing / rate * 1e9)))
        campaigns.nextAskNanos[c] = t.nanos + waitNanos
    }

    /// Notifications of `c` sent and not answered (of the entries whose budget was asked for;
    /// those settled are forgotten).
    mutating func inFlight(of c: String) -> Int {
        var n = 0
        for s in campaigns.released[c] ?? [] {
            if let h = held[s] { n += h.inFlight } else { campaigns.released[c]?.remove(s) }
        }
        for s in campaigns.waiting[c] ?? [] { n += held[s]?.inFlight ?? 0 }
        return n
    }

    /// Up to `limit` waiting notifications of `c`, in order, sent; or, with `cancel`, every one
    /// REJECTED `Cancelled`; or, with `leave`, every one left for the hand-back.
    mutating func releaseWaiting(_ c: String, limit: Int, cancel: Bool, leave leaving: Bool, _ t: WorkerTime, _ out: inout [WorkerAction]) {
        var serials = campaigns.waiting[c] ?? []
        if cancel || leaving {
            for s in serials {
                guard let h = held[s] else { continue }
                if leaving { leave(h); continue }
                // One at a time: part of a multicast may be in flight already (a group outcome
                // would cover it too).
                for i in h.tracks.indices where h.tracks[i].phase == .waiting {
                    decide(h, i, outcome(h, i, .cancelled, detail: "campaign '\(c)' was cancelled; not sent"), t)
                }
                settleIfComplete(h, t)
            }
            campaigns.waiting[c] = nil
            campaigns.waitingNotes[c] = nil
            return
        }
        var budget = limit
        var done = 0
        var toSend: [String: [SendItem]] = [:]
        while done < serials.count && budget > 0 {
            guard let h = held[serials[done]] else { done += 1; continue }
            let waiting = h.tracks.indices.filter { h.tracks[$0].phase == .waiting }
            let taking = min(budget, waiting.count)
            for i in waiting.prefix(taking) {
                if case .ready(let note) = h.entry.notes[i] { toSend[h.app, default: []].append(SendItem(tag: h.tag(i), note: note, entry: h.box)) }
            }
            budget -= taking
            if taking == waiting.count { done += 1 }
        }
        for s in serials.prefix(done) { campaigns.released[c, default: []].insert(s) }
        serials.removeFirst(done)
        campaigns.waiting[c] = serials.isEmpty ? nil : serials
        let sent = limit == Int.max ? 0 : limit - budget
        campaigns.waitingNotes[c] = serials.isEmpty ? nil : max(0, (campaigns.waitingNotes[c] ?? 0) - sent)
        for app in toSend.keys.sorted() { send(app: app, toSend[app]!, t, &out) }
    }
}
