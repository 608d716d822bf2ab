import ArgumentParser
import SwiftPushRedis
import SwiftPushWorker
import SwiftPushKeys

/// `swiftpush enqueue --rate`: the campaign's throttle (docs/worker.md, "Steering a campaign"),
/// set before the first entry is written, so that no worker sends any of it unthrottled.
extension EnqueueCommand {
    /// Checks `--rate`: a number above 0, with `--campaign`.
    func validateRate() throws(ValidationError) {
        guard let rate else { return }
        guard rate > 0, rate.isFinite, rate <= 10_000_000 else {
            throw ValidationError("--rate must be notifications per second above 0 (at most 10000000), got '\(rate)'")
        }
        if campaign == nil { throw ValidationError("--rate throttles the --campaign: give one") }
    }

    /// Sets the campaign's rate on every shard this enqueue writes to (split evenly over them,
    /// as `swiftpush campaign throttle` does), unless it has one already.
    func applyRate(_ redis: RedisRouter, keys: StreamKeys) throws(ValidationError) {
        guard let rate, let campaign else { return }
        let names = shards.map { n in (0..<n).map(String.init) } ?? [keys.shard]
        do throws(RedisError) {
            for s in names {
                try RedisCampaignControl(router: redis, keys: StreamKeys(shard: s))
                    .setRateIfNone(campaign, rate: rate / Double(names.count), nowMillis: CampaignCommand.nowMillis())
            }
        } catch {
            throw ValidationError("setting --rate: \(error.description)")
        }
    }
}
