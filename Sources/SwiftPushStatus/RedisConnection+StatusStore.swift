import SwiftPushRedis

/// One Redis server holds every shard: the key routes nothing.
extension RedisConnection: StatusStore {
    public func pipeline(_ commands: [[String]], routedBy key: String) throws -> [RedisReply] {
        try pipeline(commands.map { RedisArguments($0) })
    }

    public func keys(matching pattern: String, type: String) throws -> [String] {
        var found: [String] = []
        var cursor = "0"
        repeat {
            let reply = try command("SCAN", cursor, "MATCH", pattern, "COUNT", "1000", "TYPE", type)
            if case .error(let message) = reply { throw StatusReadError("SCAN: \(message)") }
            let parts = reply.elements
            guard parts.count == 2, let next = parts[0].text else { throw StatusReadError("SCAN: an unexpected reply") }
            found += parts[1].elements.compactMap(\.text)
            cursor = next
        } while cursor != "0"
        return found
    }
}
