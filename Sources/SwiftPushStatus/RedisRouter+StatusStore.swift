import SwiftPushRedis

/// A server or a Redis Cluster (`--cluster`, a worker's `"redis"` object): a shard's commands go
/// to the master of its hash tag's slot, redirects followed; keys are looked for on every master.
extension RedisRouter: StatusStore {
    public func pipeline(_ commands: [[String]], routedBy key: String) throws -> [RedisReply] {
        try pipeline(commands.map { RedisArguments($0) }, slot: RedisSlot.of(key)).replies
    }

    public func keys(matching pattern: String, type: String) throws -> [String] {
        if isCluster && slotMap.masters.isEmpty { try refresh() }
        let masters = isCluster ? slotMap.masters : [try node(forSlot: 0)]
        var found: [String] = []
        for node in masters { found += try connection(to: node).keys(matching: pattern, type: type) }
        return found
    }
}
