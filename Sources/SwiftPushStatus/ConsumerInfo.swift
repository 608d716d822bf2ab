import SwiftPushRedis

/// One consumer of the group as Redis sees it (`XINFO CONSUMERS push:{s} <group>`): what the
/// status shows of a worker that writes no heartbeat, and beside a heartbeat, what Redis saw.
public struct ConsumerInfo: Equatable, Sendable {
    /// The consumer's name (a worker's `consumer`).
    public var name: String
    /// Entries delivered to it and not yet acknowledged.
    public var pending: Int
    /// Milliseconds since it last read or claimed (Redis's `idle`).
    public var idleMillis: Int

    /// The consumers of `XINFO CONSUMERS`'s reply (an error reply: none).
    static func list(_ reply: RedisReply) -> [ConsumerInfo] {
        reply.elements.compactMap { item in
            let f = FieldList(item)
            guard let name = f.text("name") else { return nil }
            return ConsumerInfo(name: name, pending: f.integer("pending") ?? 0, idleMillis: f.integer("idle") ?? 0)
        }
    }

    /// A consumer given field by field.
    public init(name: String, pending: Int, idleMillis: Int) {
        self.name = name
        self.pending = pending
        self.idleMillis = idleMillis
    }
}
