import SwiftPushRedis
import SwiftPushKeys
import SwiftPushWorkerMachine

/// The operator's side of campaign control on one shard (`swiftpush campaign`): reads and
/// writes `campaign:{s}:<name>`, `campaigns:{s}` and `paused:{s}:<name>` through a router (a
/// server, or the master of the shard's slot on a cluster). docs/worker.md, "Steering a campaign".
public struct RedisCampaignControl {
    /// Where the commands go.
    public let router: RedisRouter
    /// The shard's keys.
    public let keys: StreamKeys

    /// The control of shard `keys.shard` through `router`.
    public init(router: RedisRouter, keys: StreamKeys) {
        self.router = router
        self.keys = keys
    }

    /// What one shard holds of a campaign: its control (nil: none), its notifications moved
    /// aside while paused (`campaign:<c>:paused`) and its paused stream's length in entries.
    public struct Reading: Sendable {
        public var control: CampaignControl?
        public var pausedNotifications: Int
        public var pausedEntries: Int
    }

    /// Campaign `name`'s reading.
    public func read(_ name: String) throws(RedisError) -> Reading {
        let r = try run([["HGETALL", keys.campaignPrefix + name],
                         ["HGET", keys.stats, "campaign:\(name):paused"],
                         ["XLEN", keys.pausedPrefix + name]])
        let f = r[0].elements
        var fields: [(String, String)] = []
        var k = 0
        while k + 1 < f.count {
            fields.append((f[k].text ?? "", f[k + 1].text ?? ""))
            k += 2
        }
        return Reading(control: fields.isEmpty ? nil : CampaignControl(fields: fields),
                       pausedNotifications: r[1].text.flatMap { Int($0) } ?? 0, pausedEntries: Int(r[2].integer ?? 0))
    }

    /// The names in `campaigns:{s}` (campaigns with a control).
    public func controlled() throws(RedisError) -> [String] {
        try run([["SMEMBERS", keys.campaigns]])[0].elements.compactMap(\.text)
    }

    /// Sets `name`'s state (and rate: nil leaves it as it is) at `nowMillis`, and lists it in
    /// `campaigns:{s}`, in one transaction.
    public func set(_ name: String, state: CampaignState? = nil, rate: Double? = nil, nowMillis: Int64) throws(RedisError) {
        var hset = ["HSET", keys.campaignPrefix + name, "updated_ms", String(nowMillis)]
        if let state { hset += ["state", state.rawValue] }
        if let rate { hset += ["rate", CampaignControl.text(rate)] }
        _ = try run([["MULTI"], hset, ["SADD", keys.campaigns, name], ["EXEC"]])
    }

    /// Sets `name`'s rate unless it has one (`swiftpush enqueue --rate`: an operator's
    /// `throttle` wins over a producer's), and lists it in `campaigns:{s}`, in one transaction.
    public func setRateIfNone(_ name: String, rate: Double, nowMillis: Int64) throws(RedisError) {
        _ = try run([["MULTI"], ["HSETNX", keys.campaignPrefix + name, "rate", CampaignControl.text(rate)],
                     ["HSETNX", keys.campaignPrefix + name, "updated_ms", String(nowMillis)], ["SADD", keys.campaigns, name], ["EXEC"]])
    }

    /// Lifts `name`'s throttle (its `rate` removed) at `nowMillis`.
    public func clearRate(_ name: String, nowMillis: Int64) throws(RedisError) {
        _ = try run([["MULTI"], ["HDEL", keys.campaignPrefix + name, "rate"],
                     ["HSET", keys.campaignPrefix + name, "updated_ms", String(nowMillis)], ["SADD", keys.campaigns, name], ["EXEC"]])
    }

    /// Moves up to `max` entries of `name`'s paused stream back into the shard's stream
    /// (`RedisCampaignScripts.moveBack`): entries and notifications moved; nil when refused
    /// (the campaign is paused).
    public func moveBack(_ name: String, max: Int = 200) throws(RedisError) -> (entries: Int, notifications: Int)? {
        let s = RedisCampaignScripts.moveBack.body
        let r = try run([["EVAL", s, "4", keys.stream, keys.pausedPrefix + name, keys.stats, keys.campaignPrefix + name, String(max), name]])[0]
        let n = r.elements.map { Int($0.integer ?? 0) }
        guard n.count == 2 else { throw RedisError(.reply, "moveBack: unexpected reply \(r)") }
        return n[0] < 0 ? nil : (n[0], n[1])
    }

    /// Runs `commands` on the shard's slot; an error reply throws.
    private func run(_ commands: [[String]]) throws(RedisError) -> [RedisReply] {
        let replies = try router.pipeline(commands.map { RedisArguments($0) }, slot: RedisSlot.of(keys.stream)).replies
        for r in replies { if case .error(let e) = r { throw RedisError(.reply, e) } }
        return replies
    }
}
