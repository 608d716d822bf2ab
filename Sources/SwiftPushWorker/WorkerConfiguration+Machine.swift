extension WorkerConfiguration {
    /// The figures the shard's machine works by.
    public var machineSettings: MachineSettings {
        var s = MachineSettings()
        s.maxInFlight = maxInFlight
        s.batch = batch
        s.maxDeliveries = maxDeliveries
        s.drainMillis = drainMillis
        s.reclaimIntervalMillis = reclaimIntervalMillis
        s.outcomeFormat = outcomeFormat
        s.policy.unknownResults = ResultPolicy.UnknownResults(rawValue: unknownResults) ?? .resend
        s.policy.maxSends = maxSends
        s.policy.maxDelayedRetries = maxDelayedRetries
        s.policy.delayedRetryMillis = delayedRetryMillis
        return s
    }

    /// The protocol's commands for `shard`, as `consumer`.
    public func shardCommands(shard: String, consumer: String) -> RedisShardCommands {
        RedisShardCommands(keys: StreamKeys(shard: shard), group: group, consumer: consumer,
                           minIdleMillis: effectiveMinIdleMillis, guardTTLSeconds: guardTTLSeconds)
    }
}
