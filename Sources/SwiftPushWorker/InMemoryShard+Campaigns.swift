/// Campaign control on the in-memory shard, as `RedisCampaignScripts` does it on Redis.
extension InMemoryShard {
    /// `RedisCampaignScripts.park` for one entry.
    func park(_ r: ParkRequest, consumer: String) -> ParkAnswer {
        guard let p = pending[r.entryID], p.consumer == consumer else { return .notOurs }
        guard campaigns[r.campaign]?.state == .paused, progress[r.entryID] == nil, let e = entry(r.entryID) else { return .takeIn }
        var fields = e.fields
        if !fields.contains(where: { $0.name == Array("origin".utf8) }) { fields.append((Array("origin".utf8), Array(r.entryID.utf8))) }
        paused[r.campaign, default: []].append(fields)
        stream.removeAll { $0.id == e.id }
        pending[r.entryID] = nil
        written[r.entryID] = nil
        stats["campaign:\(r.campaign):paused", default: 0] += r.count
        return .parked
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
