#if canImport(Glibc)
import Glibc
#endif
import PushCore

/// Commands to a single Redis server or to a Redis Cluster, routed by their key's hash slot.
///
/// For a cluster it learns the slot map from the seed nodes (`CLUSTER SLOTS`), keeps one
/// connection per master it needs (made lazily), and follows the cluster's answers: `-MOVED`
/// (the slot moved: that slot is re-pointed at once and the whole map refreshed before the next
/// routing), `-ASK` (a slot in migration: `ASKING` then the command, once, on the importing
/// node), `-CLUSTERDOWN`/`-TRYAGAIN`/`-LOADING` (retry after a pause). A lost node — a master
/// killed, its replica promoted 2–3 s later, every shard answering CLUSTERDOWN for about a
/// second of that — makes it re-read the map from the nodes it knows and the seeds, with a
/// growing pause, for up to `failover_timeout_ms`; after that the error goes to the caller
/// (whose own back-off takes over). Permanent errors (credentials, certificates) are thrown at
/// once. A single server is the same with one node and no slots.
///
/// Two levels of use:
/// - `pipeline`/`command`: whole exchanges with redirects and retries done here. A pipeline goes
///   to one slot's master; commands answered with a redirect or a retry are sent again (after
///   the map is refreshed), and so are those whose replies a lost connection swallowed — so
///   they must be idempotent, or the caller must accept a duplicate (an `XADD` sent twice is
///   caught by the worker's id guard as `DuplicateId`).
/// - `connection(forSlot:)`, `disposition(of:from:)`, `follow(_:)`, `connectionFailed(_:)`,
///   `refresh()`: the pieces, for a caller that keeps commands in flight on a connection
///   (the worker's read-ahead) and handles the replies itself.
///
/// Not thread-safe: one owner at a time, like its connections.
public final class RedisRouter {
    /// How connections are made (credentials, TLS, timeouts).
    public let connector: RedisConnector
    /// True for a Redis Cluster.
    public var isCluster: Bool { connector.configuration.cluster }
    /// The slot map in force (empty for a single server, or before the first refresh).
    public private(set) var slotMap = RedisSlotMap()
    /// Set by a MOVED or a lost node: the map is re-read before the next routing.
    private var mapIsStale = true
    /// Open connections, by node.
    private var connections: [RedisNode: RedisConnection] = [:]
    /// How many times the slot map has been read (tests, logs).
    public private(set) var refreshes = 0
    /// Nodes whose last connection attempt failed: asked last for the map, so that a dead
    /// master (whose connect may take the whole connect timeout on a real network) does not
    /// delay every refresh of a failover.
    private var unreachable: Set<RedisNode> = []

    /// A router over `connector`'s configuration; connects on first use.
    public init(connector: RedisConnector) {
        self.connector = connector
    }

    /// A router for `configuration` (reads its password and CA files now).
    public convenience init(_ configuration: RedisConfiguration) throws(RedisError) {
        self.init(connector: try RedisConnector(configuration))
    }

    /// Closes every connection.
    public func close() {
        for c in connections.values { c.close() }
        connections.removeAll()
    }

    /// The node serving `slot` now (the single server, or the slot's master), reading the slot
    /// map first if it is stale.
    public func node(forSlot slot: Int) throws(RedisError) -> RedisNode {
        guard isCluster else { return connector.configuration.nodes[0] }
        if mapIsStale || slotMap.master(ofSlot: slot) == nil {
            do throws(RedisError) {
                try refresh()
            } catch {
                // A map that still names a master for the slot is better than none.
                if error.isPermanent || slotMap.master(ofSlot: slot) == nil { throw error }
            }
        }
        guard let master = slotMap.master(ofSlot: slot) else {
            throw RedisError(.connection, "Redis Cluster: no master serves slot \(slot) (the cluster is incomplete or failing over)")
        }
        return master
    }

    /// The connection to the master of `slot` (made if needed).
    public func connection(forSlot slot: Int) throws(RedisError) -> RedisConnection {
        try connection(to: try node(forSlot: slot))
    }

    /// The connection to the master of `key`'s slot.
    public func connection(forKey key: String) throws(RedisError) -> RedisConnection {
        try connection(forSlot: RedisSlot.of(key))
    }

    /// The open connection to `node`, or a new one (an `-ASK` target, a node the map names).
    public func connection(to node: RedisNode) throws(RedisError) -> RedisConnection {
        if let c = connections[node], c.isConnected { return c }
        connections[node] = nil
        let c: RedisConnection
        do throws(RedisError) {
            c = try connector.connect(to: node)
        } catch {
            unreachable.insert(node)
            throw error
        }
        unreachable.remove(node)
        connections[node] = c
        return c
    }

    /// What `reply`, received on `connection`, asks of the caller (see `RedisReplyDisposition`).
    public func disposition(of reply: RedisReply, from connection: RedisConnection) -> RedisReplyDisposition {
        RedisReplyDisposition(reply, answeringNode: connection.node)
    }

    /// Acts on a redirect: `-MOVED` re-points the slot now and marks the map for a refresh;
    /// `-ASK` changes nothing (the caller sends `ASKING` + the command to the node, once);
    /// a retry marks the map stale (a failover may be under way).
    public func follow(_ disposition: RedisReplyDisposition) {
        switch disposition {
        case .moved(let slot, let node):
            slotMap.assign(slot: slot, to: node)
            mapIsStale = true
        case .retryLater:
            mapIsStale = true
        case .ask, .answer:
            break
        }
    }

    /// Forgets `connection` after it failed (its node may be dead): the map is re-read before
    /// the next routing.
    public func connectionFailed(_ connection: RedisConnection) {
        connection.close()
        if connections[connection.node] === connection { connections[connection.node] = nil }
        mapIsStale = true
    }

    /// Reads the slot map again: from each known master, then replica, then seed, until one
    /// answers `CLUSTER SLOTS`. Nothing to do for a single server.
    public func refresh() throws(RedisError) {
        guard isCluster else { return }
        // Nodes connected now first, then the others the map and the seeds name, those that
        // failed last.
        var candidates: [RedisNode] = []
        let known = slotMap.nodes + connector.configuration.nodes
        let open = known.filter { connections[$0]?.isConnected == true }
        for n in open + known.filter({ !unreachable.contains($0) }) + known where !candidates.contains(n) { candidates.append(n) }
        var lastError = RedisError(.connection, "Redis Cluster: no node to ask for the slot map")
        for node in candidates {
            do throws(RedisError) {
                slotMap = try readSlotMap(from: node)
                refreshes += 1
                mapIsStale = false
                return
            } catch {
                if error.isPermanent { throw error }
                lastError = error
            }
        }
        throw RedisError(lastError.kind, "Redis Cluster: cannot read the slot map from any of \(candidates.count) nodes; last: \(lastError.description)")
    }

    /// `CLUSTER SLOTS` from `node`, on its connection when that has nothing in flight (otherwise
    /// on a connection of its own, so as not to interleave with the owner's replies).
    private func readSlotMap(from node: RedisNode) throws(RedisError) -> RedisSlotMap {
        let busy = connections[node].map { $0.isConnected && $0.pendingReplies > 0 } ?? false
        let c = busy ? try connector.connect(to: node) : try connection(to: node)
        defer { if busy { c.close() } }
        let reply: RedisReply
        do throws(RedisError) {
            reply = try c.command("CLUSTER", "SLOTS")
        } catch {
            if !busy { connectionFailed(c) }
            throw error
        }
        let map = try RedisSlotMap(clusterSlots: reply, askedNode: node)
        if map.masters.isEmpty { throw RedisError(.connection, "Redis Cluster: \(node) knows no master yet") }
        return map
    }

    /// The pause before retry `attempt` (0, 1, ...): 50 ms doubling to 800 ms. A failover takes
    /// 2–3 s with a node timeout of 1 s, so a handful of retries spans it without hammering a
    /// cluster that is electing.
    static func retryPauseMillis(attempt: Int) -> Int { min(50 << min(attempt, 4), 800) }

    /// Sleeps `millis` (the router's callers are blocking by design; a pause is the only way to
    /// wait for a cluster to finish a failover, which announces itself to nobody).
    static func pause(millis: Int) {
        var request = timespec(tv_sec: millis / 1000, tv_nsec: (millis % 1000) * 1_000_000)
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
    }
}
