import PushCore

extension RedisRouter {
    /// Runs one command on the master of `key`'s slot, following redirects and retrying
    /// through a failover (see `pipeline`).
    public func command(_ args: RedisArguments, key: String) throws(RedisError) -> RedisReply {
        try pipeline([args], slot: RedisSlot.of(key)).replies[0]
    }

    /// Runs `commands` — all on keys of slot `slot` — in one round trip to its master, and with
    /// `wait` a `WAIT` after them on the same connection. Until every command has its answer:
    /// - `-MOVED`: the slot is re-pointed, the map refreshed, and the commands that got it are
    ///   sent again to the new master;
    /// - `-ASK`: those commands are sent again to the importing node, each after `ASKING`;
    /// - `-CLUSTERDOWN`, `-TRYAGAIN`, `-LOADING`, a lost or refused connection: after a pause
    ///   (50 ms doubling to 800 ms) and a map refresh, the commands without an answer are sent
    ///   again — a lost connection may have swallowed the replies of commands that ran, so they
    ///   must be idempotent or their duplicates harmless.
    /// Ordinary error replies are answers (returned, not thrown). Throws a permanent error at
    /// once, and a lost connection once `failover_timeout_ms` has passed without an answer.
    public func pipeline(_ commands: [RedisArguments], slot: Int, wait: RedisWait? = nil) throws(RedisError) -> RedisPipelineResult {
        var replies = [RedisReply?](repeating: nil, count: commands.count)
        var pending = Array(commands.indices)
        var acknowledged: Int?
        var ask: RedisNode?
        var redirects = 0
        var attempt = 0
        let deadline = MonotonicTime.nanos() + UInt64(connector.configuration.failoverTimeoutMillis) * 1_000_000
        while !pending.isEmpty {
            var used: RedisConnection?
            var retryReason: String?
            do throws(RedisError) {
                let c = if let ask { try connection(to: ask) } else { try connection(forSlot: slot) }
                used = c
                let asking = ask != nil
                for i in pending {
                    if asking { try c.append(Self.asking) }
                    try c.append(commands[i])
                }
                if let wait { try c.append(wait.arguments) }
                try c.flush()
                var next: [Int] = []
                var answered = false
                ask = nil
                for i in pending {
                    if asking { _ = try c.receive() }
                    let reply = try c.receive()
                    let d = disposition(of: reply, from: c)
                    follow(d)
                    switch d {
                    case .answer:
                        replies[i] = reply
                        answered = true
                    case .moved:
                        next.append(i)
                    case .ask(_, let node):
                        ask = node
                        next.append(i)
                    case .retryLater(let text):
                        retryReason = text
                        next.append(i)
                    }
                }
                if wait != nil {
                    let n = RedisWait.acknowledged(by: try c.receive())
                    if answered { acknowledged = min(acknowledged ?? n, n) }
                }
                if !next.isEmpty && retryReason == nil {
                    // A map that keeps changing (a resharding in progress): pause now and then.
                    redirects += 1
                    if redirects % Self.redirectsBeforePause == 0 { retryReason = "slot \(slot) redirected \(redirects) times" }
                }
                pending = next
            } catch {
                if error.isPermanent { throw error }
                if let used { connectionFailed(used) } else { follow(.retryLater(error.description)) }
                // Replies read before the loss stand; a WAIT that did not answer confirmed nothing.
                if wait != nil && pending.contains(where: { replies[$0] != nil }) { acknowledged = 0 }
                pending = pending.filter { replies[$0] == nil }
                ask = nil
                retryReason = error.description
            }
            guard let reason = retryReason, !pending.isEmpty else { continue }
            if MonotonicTime.nanos() >= deadline {
                throw RedisError(.connection, "Redis\(isCluster ? " Cluster" : ""): \(pending.count) of \(commands.count) commands for slot \(slot) still unanswered after \(connector.configuration.failoverTimeoutMillis) ms; last: \(reason)")
            }
            Self.pause(millis: Self.retryPauseMillis(attempt: attempt))
            attempt += 1
        }
        return RedisPipelineResult(replies: replies.map { $0! }, replicasAcknowledged: acknowledged)
    }

    /// Redirects followed at once before a pause.
    static let redirectsBeforePause = 5

    /// `ASKING`: the next command may use a slot this node is importing.
    static let asking = RedisArguments(["ASKING"])
}
