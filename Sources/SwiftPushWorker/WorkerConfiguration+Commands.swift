import SwiftPushKeys
import SwiftPushWorkerMachine
import SwiftPushWorkerRedis

extension WorkerConfiguration {
    /// The protocol's commands for `shard`, as `consumer`.
    public func shardCommands(shard: String, consumer: String) -> RedisShardCommands {
        RedisShardCommands(keys: StreamKeys(shard: shard), group: group, consumer: consumer,
                           minIdleMillis: effectiveMinIdleMillis, guardTTLSeconds: guardTTLSeconds)
    }
}
