import Foundation
import PushCore
import SwiftPushRedis
import Testing

/// `RedisRouter` against a real 3-master, 3-replica cluster (TLS only, an ACL user): routing by
/// slot, `-ASK` during a slot migration, `-MOVED` after it, WAIT on a replica. The slots are
/// migrated by hand with `CLUSTER SETSLOT` and `MIGRATE`, as `redis-cli --cluster reshard` does.
@Suite("Redis Cluster routing", .serialized, .timeLimit(.minutes(5)))
struct ClusterRoutingTests {
    /// One cluster for the suite (its nodes die with the test process: the helper's --owner).
    static let shared = Result { try RedisTestCluster() }

    let cluster: RedisTestCluster
    init() throws { cluster = try Self.shared.get() }

    /// A connection straight to `node`, for checking and administering it.
    func admin(_ node: RedisNode) throws -> RedisConnection {
        try RedisConnector(cluster.configuration()).connect(to: node)
    }

    func xadd(_ key: String, _ value: String) -> RedisArguments {
        RedisArguments(["XADD", key, "*", "n", value])
    }

    @Test("Commands go to the master that serves their key's slot, with one read of the slot map")
    func routing() throws {
        let router = try RedisRouter(cluster.configuration(seeds: 1))
        defer { router.close() }
        for shard in 0..<6 {
            let key = "route:{\(shard)}"
            let reply = try router.command(xadd(key, "1"), key: key)
            #expect(reply.text?.contains("-") == true, "\(reply)")
            let master = try #require(cluster.master(of: key))
            #expect(router.slotMap.master(ofSlot: RedisSlot.of(key)) == master)
            let direct = try admin(master)
            #expect(try direct.command("CLUSTER", "KEYSLOT", key) == .integer(Int64(RedisSlot.of(key))))
            #expect(try direct.command("XLEN", key) == .integer(1))
        }
        #expect(router.refreshes == 1)
        #expect(router.slotMap.masters.count == 3 && router.slotMap.coversEverySlot)
    }

    /// Starts moving `slot` from `source` to `target`: IMPORTING on the target, MIGRATING on the source.
    func beginMigration(slot: Int, from source: RedisNode, to target: RedisNode) throws {
        let targetID = try admin(target).command("CLUSTER", "MYID").text!
        let sourceID = try admin(source).command("CLUSTER", "MYID").text!
        #expect(try admin(target).command("CLUSTER", "SETSLOT", String(slot), "IMPORTING", sourceID) == .status("OK"))
        #expect(try admin(source).command("CLUSTER", "SETSLOT", String(slot), "MIGRATING", targetID) == .status("OK"))
    }

    /// Moves `keys` to the target and gives it the slot on every master.
    func finishMigration(slot: Int, keys: [String], from source: RedisNode, to target: RedisNode, masters: [RedisNode]) throws {
        if !keys.isEmpty {
            let reply = try admin(source).command(RedisArguments(["MIGRATE", target.host, String(target.port), "", "0", "5000",
                                                                   "AUTH2", RedisTestCluster.user, RedisTestCluster.password, "KEYS"] + keys))
            #expect(reply == .status("OK"), "\(reply)")
        }
        let targetID = try admin(target).command("CLUSTER", "MYID").text!
        for m in masters {
            #expect(try admin(m).command("CLUSTER", "SETSLOT", String(slot), "NODE", targetID) == .status("OK"))
        }
    }

    @Test("During a slot migration a key already gone answers ASK: the router sends ASKING and the command to the importing node, its map unchanged")
    func ask() throws {
        let router = try RedisRouter(cluster.configuration(seeds: 1))
        defer { router.close() }
        let old = "push:{ask}", new = "outcomes:{ask}", slot = RedisSlot.of(old)
        _ = try router.command(xadd(old, "1"), key: old)
        let source = try #require(router.slotMap.master(ofSlot: slot))
        let target = try #require(router.slotMap.masters.first { $0 != source })
        try beginMigration(slot: slot, from: source, to: target)
        // The new key is not on the source: it answers -ASK, the router follows it.
        let added = try router.command(xadd(new, "2"), key: new)
        #expect(added.text?.contains("-") == true, "\(added)")
        #expect(router.slotMap.master(ofSlot: slot) == source)
        // The key is on the importing node (seen there only after ASKING); the source, which
        // does not have it, sends whoever asks there.
        let t = try admin(target)
        let onTarget = try t.pipeline([RedisArguments(["ASKING"]), RedisArguments(["XLEN", new])])
        #expect(onTarget == [.status("OK"), .integer(1)])
        let fromSource = try admin(source).command("XLEN", new)
        #expect(RedisReplyDisposition(fromSource, answeringNode: source) == .ask(slot: slot, node: target))
        // A key not yet moved is still served by the source.
        #expect(try router.command(RedisArguments(["XLEN", old]), key: old) == .integer(1))
        try finishMigration(slot: slot, keys: [old], from: source, to: target, masters: router.slotMap.masters)
    }

    @Test("A slot moved to another master answers MOVED: the router re-reads its map and the command runs there")
    func moved() throws {
        let router = try RedisRouter(cluster.configuration(seeds: 1))
        defer { router.close() }
        let key = "push:{moved}", slot = RedisSlot.of(key)
        _ = try router.command(xadd(key, "1"), key: key)
        let source = try #require(router.slotMap.master(ofSlot: slot))
        let target = try #require(router.slotMap.masters.first { $0 != source })
        try beginMigration(slot: slot, from: source, to: target)
        try finishMigration(slot: slot, keys: [key], from: source, to: target, masters: router.slotMap.masters)
        let refreshes = router.refreshes
        let result = try router.pipeline([RedisArguments(["XLEN", key]), xadd(key, "2")], slot: slot)
        #expect(result.replies[0] == .integer(1))
        #expect(result.replies[1].text?.contains("-") == true)
        #expect(router.slotMap.master(ofSlot: slot) == target)
        #expect(router.refreshes == refreshes + 1)
        #expect(try admin(target).command("XLEN", key) == .integer(2))
    }

    @Test("WAIT 1 after a pipeline reports the replica's acknowledgement (and the figures of its cost)")
    func waitOnAReplica() throws {
        let router = try RedisRouter(cluster.configuration(seeds: 1))
        defer { router.close() }
        let key = "push:{wait}", slot = RedisSlot.of(key)
        let wait = RedisWait(replicas: 1, timeoutMillis: 2000)
        let batch = (0..<50).map { xadd(key, String($0)) }
        let confirmed = try router.pipeline(batch, slot: slot, wait: wait)
        #expect(confirmed.replicasAcknowledged == 1 && confirmed.isConfirmed(wait))
        #expect(confirmed.replies.allSatisfy { $0.text?.contains("-") == true })
        // Figures only (never an assertion): medians of 30 pipelines of 1 and of 50 XADDs each,
        // without and with WAIT 1, over TLS on loopback; this machine is shared, so they are
        // indications — scripts/bench-redis-wait.sh measures on a quiet machine.
        for size in [1, 50] {
            let commands = Array(batch.prefix(size))
            func median(_ w: RedisWait?) throws -> Double {
                var times: [Double] = []
                for _ in 0..<30 {
                    var failure: Error?
                    times.append(millisecondsTaken { do { _ = try router.pipeline(commands, slot: slot, wait: w) } catch { failure = error } })
                    if let failure { throw failure }
                }
                return times.sorted()[times.count / 2]
            }
            let plain = try median(nil), waited = try median(wait)
            print("redis-wait-cost pipeline=\(size) without_wait_ms=\(String(format: "%.3f", plain)) with_wait1_ms=\(String(format: "%.3f", waited))")
        }
    }
}
