/// "Confirm writes on N replicas": `WAIT numreplicas timeout` sent after a batch of writes on the
/// same connection (https://redis.io/commands/wait/). Redis replication is asynchronous: a
/// write a master acknowledged can be lost if the master dies before a replica has it; a write
/// that WAIT saw on a replica survives that replica's promotion. WAIT only covers writes made on
/// its own connection, so it must follow them on that connection.
public struct RedisWait: Sendable, Equatable {
    /// Replicas that must acknowledge (≥ 1).
    public var replicas: Int
    /// How long WAIT blocks at most (≥ 1: WAIT with 0 blocks for ever).
    public var timeoutMillis: Int

    /// WAIT for `replicas` replicas, at most `timeoutMillis`.
    public init(replicas: Int, timeoutMillis: Int) {
        self.replicas = replicas
        self.timeoutMillis = timeoutMillis
    }

    /// The configuration's `wait_replicas`/`wait_timeout_ms`; nil when it asks for none.
    public init?(_ configuration: RedisConfiguration) {
        guard configuration.waitReplicas > 0 else { return nil }
        self.init(replicas: configuration.waitReplicas, timeoutMillis: configuration.waitTimeoutMillis)
    }

    /// The command: `WAIT <replicas> <timeout>`.
    public var arguments: RedisArguments {
        var a = RedisArguments(reservingBytes: 16)
        a.append("WAIT")
        a.append(integer: Int64(replicas))
        a.append(integer: Int64(timeoutMillis))
        return a
    }

    /// How many replicas WAIT's `reply` says acknowledged (0 for anything but an integer: an
    /// error means nothing was confirmed).
    public static func acknowledged(by reply: RedisReply) -> Int {
        if case .integer(let n) = reply { return Int(n) }
        return 0
    }

    /// Throws `.notReplicated` unless `reply` counts at least `replicas`.
    public func check(_ reply: RedisReply, endpoint: String) throws(RedisError) {
        let n = Self.acknowledged(by: reply)
        if n < replicas {
            let why = reply.errorText.map { ": \($0)" } ?? ""
            throw RedisError(.notReplicated, "Redis at \(endpoint): writes acknowledged by \(n) of \(replicas) replicas within \(timeoutMillis) ms\(why)")
        }
    }
}
