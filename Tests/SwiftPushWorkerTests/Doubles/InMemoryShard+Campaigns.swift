@testable import SwiftPushWorker
@testable import SwiftPushWorkerMachine
@testable import SwiftPushWorkerRedis
import SwiftPushKeys

/// Campaign control on the in-memory shard, as `RedisCampaignScripts` does it on Redis.
extension InMemoryShard {
    /// `RedisCampaignScripts.park` for one entry.
    func park(_ r: ParkRequest, consumer: String) -> ParkAnswer {
        guard let p = pending[r.entryID], p.consumer == consumer else { return .notOurs }
        let wanted = r.dueMillis == nil ? campaigns[r.campaign]?.state == .paused : campaigns[r.campaign]?.rate != nil
        guard wanted, progress[r.entryID] == nil, let e = entry(r.entryID) else { return .takeIn }
        var fields = e.fields
        if !fields.contains(where: { $0.name == Array("origin".utf8) }) { fields.append((Array("origin".utf8), Array(r.entryID.utf8))) }
        if let due = r.dueMillis {
            delayed[r.entryID + ":t"] = (due, fields)
        } else {
            paused[r.campaign, default: []].append(fields)
            stats["campaign:\(r.campaign):paused", default: 0] += r.count
        }
        stream.removeAll { $0.id == e.id }
        pending[r.entryID] = nil
        written[r.entryID] = nil
        return .parked
    }

    /// `RedisCampaignScripts.budget` on the shard's clock.
    func budget(_ campaign: String, want: Int) -> Int {
        guard let rate = campaigns[campaign]?.rate else { return want }
        let burst = max(1, rate / 10)
        let now = Double(nowMillis) * 1000
        var (tokens, at) = buckets[campaign] ?? (burst, now)
        tokens = min(burst, tokens + max(0, now - at) * rate / 1_000_000)
        let grant = max(0, min(want, Int(tokens.rounded(.down))))
        buckets[campaign] = (tokens - Double(grant), now)
        return grant
    }

    /// `RedisCampaignScripts.moveBack`: the campaign's paused entries back into the stream, as
    /// new entries; nil (nothing moved) while it is paused.
    @discardableResult
    public func moveBack(_ campaign: String) -> Int? {
        if campaigns[campaign]?.state == .paused { return nil }
        let entries = paused.removeValue(forKey: campaign) ?? []
        for f in entries { add(bytes: f) }
        stats["campaign:\(campaign):paused"] = nil
        return entries.count
    }
}
