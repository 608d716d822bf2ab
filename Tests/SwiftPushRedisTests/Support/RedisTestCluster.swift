import Foundation
import SwiftPushRedis

/// A 3-master, 3-replica Redis Cluster on loopback, TLS only with an ACL user, started and
/// stopped by Tests/support/redis-cluster.sh (the helper the shell suites and the worker's
/// cluster test use too).
final class RedisTestCluster: Sendable {
    /// The ACL user every node knows (the default user is off).
    static let user = "pusher"
    static let password = "cluster-secret"

    let directory: String
    /// The six nodes, in creation order.
    let nodes: [RedisNode]

    /// Starts the cluster (bounded by the helper's own waits) or throws.
    init() throws {
        directory = RedisTestSupport.temporaryDirectory("cluster")
        let (status, _) = Self.helper(["start", directory, "--tls", RedisTestSupport.pki,
                                       "--auth", Self.user, Self.password, "--owner", String(getpid())])
        guard status == 0, let ports = try? String(contentsOfFile: directory + "/ports", encoding: .utf8) else {
            Self.helper(["stop", directory])
            throw RedisServerProcess.StartError(description: "Tests/support/redis-cluster.sh start failed (\(status))")
        }
        nodes = ports.split(separator: "\n").compactMap { Int($0).map { RedisNode(host: "127.0.0.1", port: $0) } }
    }

    deinit {
        Self.helper(["stop", directory])
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// The configuration a client of this cluster uses: seeds, TLS with the test CA, the user.
    func configuration(seeds: Int = 1) -> RedisConfiguration {
        var c = RedisConfiguration(clusterSeeds: Array(nodes.prefix(seeds)))
        c.username = Self.user
        c.password = .value(.init(copying: Self.password))
        c.tls = RedisTLSConfiguration(caFile: RedisTestSupport.pki + "/ca.pem")
        c.connectTimeoutMillis = 2000
        c.commandTimeoutMillis = 5000
        return c
    }

    /// SIGKILLs the node `node`.
    func kill(_ node: RedisNode) {
        let (status, _) = Self.helper(["kill", directory, String(node.port)])
        precondition(status == 0, "redis-cluster.sh kill \(node.port) failed")
    }

    /// Waits (bounded) until every live node says cluster_state:ok with every slot on a live master.
    func waitUntilHealthy(seconds: Int = 30) -> Bool {
        Self.helper(["wait-ok", directory, String(seconds)]).0 == 0
    }

    /// The live master serving `key`'s slot, as the cluster itself says (redis-cli).
    func master(of key: String) -> RedisNode? {
        let (status, out) = Self.helper(["master-of", directory, key])
        return status == 0 ? RedisNode(parsing: out.trimmingCharacters(in: .whitespacesAndNewlines)) : nil
    }

    @discardableResult
    private static func helper(_ arguments: [String]) -> (Int32, String) {
        RedisTestSupport.run("/bin/bash", [RedisTestSupport.root.appendingPathComponent("Tests/support/redis-cluster.sh").path] + arguments)
    }
}
