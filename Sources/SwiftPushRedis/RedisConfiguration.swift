import PushCore

/// How to reach Redis: one model for the worker's `"redis"` object (worker.json), the
/// command-line tools' Redis options and anything else that talks to the queue.
///
/// A single server (`host`, `port`) or a Redis Cluster (`nodes`: seed nodes, any of its
/// members; the rest is learnt from `CLUSTER SLOTS`); optional ACL user and password (from the
/// configuration, a file or an environment variable); optional TLS; timeouts; and whether
/// writes wait for replicas (`WAIT`). JSON names and defaults are in docs/worker.md,
/// "Redis connection".
public struct RedisConfiguration: Sendable, Equatable {
    /// The server, or a cluster's seed nodes.
    public var nodes: [RedisNode] = [RedisNode(host: "127.0.0.1", port: 6379)]
    /// True for a Redis Cluster (`nodes` given): commands are routed by their key's slot.
    public var cluster = false
    /// The ACL user (`AUTH username password`); nil: the default user (`AUTH password`).
    public var username: String?
    /// Where the password comes from; `.none`: no AUTH.
    public var password: RedisPasswordSource = .none
    /// TLS settings; nil: plain TCP.
    public var tls: RedisTLSConfiguration?
    /// How long a connection may take to set up (TCP, TLS, AUTH).
    public var connectTimeoutMillis = 5000
    /// How long a command's reply may take; must exceed any `BLOCK` the caller uses.
    public var commandTimeoutMillis = 15_000
    /// Replicas that must acknowledge a batch of writes (`WAIT n`) before it counts as done; 0:
    /// no WAIT (Redis replication is asynchronous: a failover can lose the last writes).
    public var waitReplicas = 0
    /// WAIT's timeout.
    public var waitTimeoutMillis = 1000
    /// How long a cluster command keeps retrying through a failover (CLUSTERDOWN, TRYAGAIN,
    /// LOADING, a lost master, redirects) before its error goes to the caller.
    public var failoverTimeoutMillis = 10_000

    /// 127.0.0.1:6379, plain, no password, no WAIT.
    public init() {}

    /// A single server at `node`.
    public init(node: RedisNode) { nodes = [node] }

    /// A cluster known by `seeds`.
    public init(clusterSeeds seeds: [RedisNode]) {
        nodes = seeds
        cluster = true
    }

    /// The rules a configuration must follow; the error names the key.
    public func check() throws(RedisConfigurationError) {
        if nodes.isEmpty { throw RedisConfigurationError(cluster ? "nodes lists no seed node" : "no Redis server given") }
        if !cluster && nodes.count > 1 { throw RedisConfigurationError("a single server has one host and port (nodes is for a cluster)") }
        for node in nodes {
            if node.host.isEmpty { throw RedisConfigurationError("a Redis host is empty") }
            if !(1...65535).contains(node.port) { throw RedisConfigurationError("port \(node.port) of \(node.host) is not in 1...65535") }
        }
        if username?.isEmpty == true { throw RedisConfigurationError("username is empty") }
        if username != nil && password == .none {
            throw RedisConfigurationError("username \"\(username!)\" needs a password (password, password_file or password_env)")
        }
        try tls?.check()
        if connectTimeoutMillis < 1 { throw RedisConfigurationError("connect_timeout_ms must be at least 1") }
        if commandTimeoutMillis < 1 { throw RedisConfigurationError("command_timeout_ms must be at least 1") }
        if !(0...16).contains(waitReplicas) { throw RedisConfigurationError("wait_replicas must be 0...16") }
        // WAIT n 0 blocks for ever: a timeout is required.
        if waitTimeoutMillis < 1 { throw RedisConfigurationError("wait_timeout_ms must be at least 1 (WAIT with 0 blocks for ever)") }
        if failoverTimeoutMillis < 0 { throw RedisConfigurationError("failover_timeout_ms must not be negative") }
    }

    /// Where it connects, for messages: `host:port`, or `cluster host:port,...`, and `tls`.
    public var summary: String {
        let list = nodes.map(\.description).joined(separator: ",")
        return (cluster ? "cluster " : "") + list + (tls != nil ? " (TLS)" : "")
    }
}
