import SwiftPushRedis
import SwiftPushStatus
import SwiftPushWorker
import SwiftPushKeys

/// What the shards hold of every campaign, for `swiftpush campaign`: each one's control per
/// shard (`campaign:{s}:<name>`), what it has moved aside while paused, and its counters in
/// `stats:{s}` (`campaign:<c>:...`). A campaign is known when any shard has a control, a
/// counter or a paused entry of it.
struct CampaignFleet {
    /// One campaign across the shards.
    struct Campaign {
        var name: String
        /// Per shard with something of it: its reading (control, paused).
        var shards: [String: RedisCampaignControl.Reading] = [:]
        /// Its counters summed over the shards that have some.
        var counts: OutcomeCounts?
        /// The state the fleet applies: cancelled if any shard says so, else paused if any
        /// does, else active.
        var state: CampaignState {
            let states = shards.values.compactMap { $0.control?.state }
            return states.contains(.cancelled) ? .cancelled : states.contains(.paused) ? .paused : .active
        }
        /// The fleet's rate limit: the shards' rates together (`throttle` splits one over them),
        /// nil when none has one.
        var rate: Double? {
            let rates = shards.values.compactMap { $0.control?.rate }
            return rates.isEmpty ? nil : rates.reduce(0, +)
        }
        /// Notifications (and stream entries) moved aside while paused.
        var pausedNotifications: Int { shards.values.reduce(0) { $0 + $1.pausedNotifications } }
        var pausedEntries: Int { shards.values.reduce(0) { $0 + $1.pausedEntries } }
        /// Whether every notification the producers counted has its outcome and none is moved
        /// aside: nothing of it waits or is in flight. Nil when no producer counted it
        /// (`enqueued` unknown: a plain XADD producer), so that nobody can tell.
        var finished: Bool? {
            guard let c = counts, let enqueued = c.enqueued else { return nil }
            return c.done >= enqueued && pausedEntries == 0
        }
    }

    let router: RedisRouter
    /// The shards looked at.
    let shards: [String]
    /// Every stats hash read, by shard.
    private(set) var stats: [String: StatsCounters] = [:]

    /// The fleet of `shards`, or of every shard with a stream or a control set (SCAN).
    init(router: RedisRouter, shards listed: [String]?) throws(RedisError) {
        self.router = router
        if let listed {
            shards = listed
        } else {
            do {
                let streams = try router.keys(matching: "push:{*}", type: "stream").compactMap(StatusKeys.shard(ofStream:))
                let sets = try router.keys(matching: "campaigns:{*}", type: "set").compactMap { key -> String? in
                    guard key.hasPrefix("campaigns:{"), key.hasSuffix("}") else { return nil }
                    return String(key.dropFirst(11).dropLast())
                }
                shards = Array(Set(streams + sets)).sorted()
            } catch let e as RedisError {
                throw e
            } catch {
                throw RedisError(.reply, "looking for shards: \(error)")
            }
        }
        for s in shards {
            let keys = StreamKeys(shard: s)
            let r = try router.pipeline([RedisArguments(["HGETALL", keys.stats])], slot: RedisSlot.of(keys.stream)).replies[0]
            let flat = r.elements
            var fields: [(String, String)] = []
            var k = 0
            while k + 1 < flat.count {
                fields.append((flat[k].text ?? "", flat[k + 1].text ?? ""))
                k += 2
            }
            stats[s] = StatsCounters(fields: fields)
        }
    }

    /// The control of shard `s`.
    func control(_ s: String) -> RedisCampaignControl { RedisCampaignControl(router: router, keys: StreamKeys(shard: s)) }

    /// Every campaign's name known on the shards, sorted.
    func names() throws(RedisError) -> [String] {
        var all = Set<String>()
        for s in shards {
            all.formUnion(try control(s).controlled())
            all.formUnion(stats[s]?.campaigns.keys.map { $0 } ?? [])
        }
        return all.sorted()
    }

    /// Campaign `name` on every shard; nil when no shard knows it.
    func campaign(_ name: String) throws(RedisError) -> Campaign? {
        var c = Campaign(name: name)
        for s in shards {
            let r = try control(s).read(name)
            let counted = stats[s]?.campaigns[name]
            if let counted { c.counts = c.counts.map { $0 + counted } ?? counted }
            if r.control != nil || r.pausedEntries > 0 || r.pausedNotifications != 0 || counted != nil { c.shards[s] = r }
        }
        return c.shards.isEmpty ? nil : c
    }
}
