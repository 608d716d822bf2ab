/// Which master serves each of a cluster's 16,384 hash slots, as `CLUSTER SLOTS` told it
/// (https://redis.io/commands/cluster-slots/), plus the replicas it named (where to ask again
/// when a master is gone). A pure value: `RedisRouter` fills it and asks it; tests build it from
/// RESP replies.
///
/// `CLUSTER SLOTS` rather than `CLUSTER SHARDS`: it answers on every Redis Cluster since 3.0
/// (managed services included), and its ranges are all a router needs.
public struct RedisSlotMap: Sendable, Equatable {
    /// The masters and replicas named, masters first.
    public private(set) var nodes: [RedisNode] = []
    /// How many of `nodes` are masters (the first ones).
    private var masterCount = 0
    /// For each slot, the index in `nodes` of its master, or -1 when no master serves it.
    private var owners = [Int16](repeating: -1, count: RedisSlot.count)

    /// An empty map (no slot served).
    public init() {}

    /// The map a `CLUSTER SLOTS` reply describes. `askedNode` is the node that answered: an
    /// empty host in the reply means "the address you reached me at" (Redis 7 says so when it
    /// does not know its own). Throws when the reply is not a slot table.
    public init(clusterSlots reply: RedisReply, askedNode: RedisNode) throws(RedisError) {
        guard case .array(let ranges) = reply else {
            throw RedisError(.reply, "CLUSTER SLOTS from \(askedNode): \(reply.errorText ?? "not an array")")
        }
        var replicas: [RedisNode] = []
        for range in ranges {
            let r = range.elements
            guard r.count >= 3, let first = r[0].integer, let last = r[1].integer,
                  first >= 0, last < RedisSlot.count, first <= last else {
                throw RedisError(.reply, "CLUSTER SLOTS from \(askedNode): a range that is not [first, last, master...]")
            }
            guard let master = Self.node(r[2], askedNode: askedNode) else { continue }
            let index = indexOfMaster(master)
            for slot in Int(first)...Int(last) { owners[slot] = Int16(index) }
            for replica in r.dropFirst(3) {
                if let n = Self.node(replica, askedNode: askedNode), !replicas.contains(n) { replicas.append(n) }
            }
        }
        nodes += replicas.filter { !nodes.contains($0) }
    }

    /// A node entry (`[host, port, id, ...]`); nil for "?" (an endpoint the node does not know).
    private static func node(_ entry: RedisReply, askedNode: RedisNode) -> RedisNode? {
        let e = entry.elements
        guard e.count >= 2, let host = e[0].text, let port = e[1].integer, (1...65535).contains(port), host != "?" else { return nil }
        return RedisNode(host: host.isEmpty ? askedNode.host : host, port: Int(port))
    }

    /// Index of `node` among the masters, adding it.
    private mutating func indexOfMaster(_ node: RedisNode) -> Int {
        if let i = nodes[0..<masterCount].firstIndex(of: node) { return i }
        nodes.insert(node, at: masterCount)
        masterCount += 1
        return masterCount - 1
    }

    /// The master serving `slot`, nil when none is known.
    public func master(ofSlot slot: Int) -> RedisNode? {
        let i = owners[slot]
        return i < 0 ? nil : nodes[Int(i)]
    }

    /// The masters, in the order first seen.
    public var masters: [RedisNode] { Array(nodes[0..<masterCount]) }

    /// True when every slot has a master.
    public var coversEverySlot: Bool { !owners.contains(-1) }

    /// Records that `slot` is now served by `node` (a `-MOVED` answer), until the next refresh.
    public mutating func assign(slot: Int, to node: RedisNode) {
        let replicas = Array(nodes[masterCount...])
        if let r = replicas.firstIndex(of: node) { nodes.remove(at: masterCount + r) }
        owners[slot] = Int16(indexOfMaster(node))
    }
}
