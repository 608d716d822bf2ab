import CSwiftPushABI
import PushCore

/// Turning the clients' results into settlements, resends or delays (ResultPolicy decides).
extension Worker {
    /// Applies the policy to each result.
    func handle(_ results: [push_result]) {
        if results.isEmpty { return }
        let nowMillis = wallMillis()
        for var r in results {
            guard let h = held[r.tag] else { continue }
            h.attempts += Int(r.attempts)
            let kind: OutcomeRecord.Kind
            switch UInt32(bitPattern: r.outcome) {
            case PUSH_OUTCOME_ACCEPTED.rawValue: kind = .accepted
            case PUSH_OUTCOME_REJECTED.rawValue: kind = .rejected
            default: kind = .failed
            }
            let reason = APNsReason(rawValue: r.reason) ?? .unknown
            if suspects.outstandingCount > 0 { suspects.answered(tag: r.tag, app: h.note.app) }
            if reason.retryClass == .refused || (!refusals.isEmpty && refusals[h.note.app] != nil) { noteCredentials(of: h, status: r.status, reason: reason) }
            let decision = policy.decide(outcome: kind, reason: reason, sends: h.sends, retries: h.note.retries,
                                         notAfter: h.note.notAfter, nowMillis: nowMillis, stopping: stopping)
            switch decision {
            case .record:
                held.removeValue(forKey: r.tag)
                var o = outcome(for: h.entry, note: h.note, kind: kind)
                o.status = r.status
                let text = withUnsafeBytes(of: &r.reason_text) { raw in
                    String(decoding: raw.prefix(raw.firstIndex(of: 0) ?? raw.count), as: UTF8.self)
                }
                o.reason = reason == .unknown && !text.isEmpty ? text : reason.text
                if text != o.reason { o.detail = text }
                o.apnsID = h.note.apnsID
                o.attempts = h.attempts
                o.timestampMs = r.timestamp_ms
                o.latencyUs = Int64((MonotonicTime.nanos() - h.firstSendNanos) / 1000)
                o.maybeDelivered = kind == .failed && reason.retryClass == .unknown
                record(o)
            case .resend(let afterMillis):
                counters.resent += 1
                scheduleResend(r.tag, afterMillis: afterMillis)
            case .delay(let due):
                held.removeValue(forKey: r.tag)
                counters.delayed += 1
                unsettled.append(.delay(entry: h.entry, id: h.note.id, dueMillis: due))
            case .leavePending:
                held.removeValue(forKey: r.tag)
                heldEntries.remove(h.entry.entryID)
                counters.leftPending += 1
            }
        }
    }

    /// Sends again the held notifications whose resend time has come (by app, in batches).
    func resendDue() {
        if waitingResend.isEmpty { return }
        let now = MonotonicTime.nanos()
        var due: [String: [UInt64]] = [:]
        var later: [UInt64] = []
        for tag in waitingResend {
            guard let h = held[tag] else { continue }
            if h.resendAtNanos <= now || stopping { due[h.note.app, default: []].append(tag) } else { later.append(tag) }
        }
        waitingResend = later
        for (app, tags) in due { send(app: app, tags: tags) }
    }
}
