import CSwiftPushABI
import PushCore

/// What the worker does about trouble on APNs's side: refused credentials (one probe at a
/// time, the rest rejected unsent) and the events it logs as they happen (`APNsEventLog`).
extension Worker {
    /// `tags` of `app` less those whose app and topic APNs refuses the credentials of, which are
    /// recorded REJECTED unsent; one of them (the probe) still goes, whenever none is held, to
    /// find out when APNs accepts the credentials again.
    func sendingPastRefusals(app: String, tags: [UInt64]) -> [UInt64] {
        guard var byTopic = refusals[app] else { return tags }
        var going: [UInt64] = []
        going.reserveCapacity(tags.count)
        for tag in tags {
            guard let h = held[tag] else { continue }
            let topic = [UInt8](h.note.topic)
            guard var refusal = byTopic[topic] else {
                going.append(tag)
                continue
            }
            if let probe = refusal.probe, probe != tag, held[probe] != nil {
                held.removeValue(forKey: tag)
                if suspects.outstandingCount > 0 { suspects.answered(tag: tag, app: app) }
                var o = outcome(for: h.entry, note: h.note, kind: .rejected)
                o.status = refusal.status
                o.reason = refusal.reason
                o.detail = "not sent: APNs refuses this app's credentials for topic \(String(decoding: topic, as: UTF8.self)) "
                    + "(\(refusal.reason)); while it does, one notification at a time is sent to find out when it accepts them again"
                o.apnsID = h.note.apnsID
                record(o)
                continue
            }
            refusal.probe = tag
            byTopic[topic] = refusal
            going.append(tag)
        }
        refusals[app] = byTopic
        return going
    }

    /// What an answer says about its app's credentials: a refusal starts (or goes on), any other
    /// answer from APNs ends it.
    func noteCredentials(of h: Held, status: Int32, reason: APNsReason) {
        if reason.retryClass == .refused {
            let topic = [UInt8](h.note.topic)
            // A refusal of one sent before it started leaves the probe in flight the probe.
            let probe = refusals[h.note.app]?[topic]?.probe
            refusals[h.note.app, default: [:]][topic] = CredentialRefusal(status: status, reason: reason.text, probe: probe)
            events.note(.credentialsRefused, app: h.note.app, detail: "\(status) \(reason.text)")
        } else if status != 0, refusals[h.note.app]?.removeValue(forKey: [UInt8](h.note.topic)) != nil {
            if refusals[h.note.app]?.isEmpty == true { refusals[h.note.app] = nil }
            log.info("APNs accepts the credentials again", ["app": h.note.app, "topic": String(decoding: h.note.topic, as: UTF8.self)])
        }
    }

    /// GOAWAYs, counted by the client: the ones since the last look become events.
    func noteClientEvents(app: String, _ stats: push_stats) {
        let seen = goawaysSeen[app] ?? 0
        guard stats.goaways > seen else { return }
        goawaysSeen[app] = stats.goaways
        var s = stats
        let reason = withUnsafeBytes(of: &s.last_goaway_reason) { raw in
            String(decoding: raw.prefix(raw.firstIndex(of: 0) ?? raw.count), as: UTF8.self)
        }
        events.note(.goaway, app: app, count: Int(stats.goaways - seen), detail: reason.isEmpty ? "" : "last reason: \(reason)")
    }
}
