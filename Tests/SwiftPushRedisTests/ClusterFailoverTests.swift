import Foundation
import PushCore
import SwiftPushRedis
import Testing

/// A master SIGKILLed under a writer: the router, whose only seed is that very master, re-reads
/// the map from the nodes it learnt, follows the promoted replica, and no write that WAIT 1
/// confirmed is lost.
@Suite("Redis Cluster failover", .serialized, .timeLimit(.minutes(5)))
struct ClusterFailoverTests {
    @Test("A killed master's replica takes over: the router follows it, and every write WAIT 1 confirmed is still there")
    func failover() throws {
        let cluster = try RedisTestCluster()
        let key = "push:{0}", slot = RedisSlot.of(key)
        let victim = try #require(cluster.master(of: key))
        var configuration = cluster.configuration()
        configuration.nodes = [victim]
        // Room for a slow election on a loaded machine (measured: about 2 s when idle).
        configuration.failoverTimeoutMillis = 20_000
        let router = try RedisRouter(configuration)
        defer { router.close() }
        let wait = RedisWait(replicas: 1, timeoutMillis: 300)
        var confirmed: [String] = []
        var written: [String] = []
        var sequence = 0
        func batch() throws -> RedisPipelineResult {
            let values = (0..<50).map { _ in sequence += 1; return String(sequence) }
            let result = try router.pipeline(values.map { RedisArguments(["XADD", key, "*", "n", $0]) }, slot: slot, wait: wait)
            #expect(result.replies.allSatisfy { $0.text?.contains("-") == true }, "\(result.replies.first!)")
            written += values
            if result.isConfirmed(wait) { confirmed += values }
            return result
        }
        for _ in 0..<10 { #expect(try batch().replicasAcknowledged == 1) }
        #expect(confirmed.count == 500)

        cluster.kill(victim)
        // The first batch after the kill waits through the failover (CLUSTERDOWN, refused
        // connections, a stale map) inside the router, within failover_timeout_ms.
        var afterKill: RedisPipelineResult?
        let ms = millisecondsTaken { afterKill = try? batch() }
        let first = try #require(afterKill, "the first batch after the kill failed")
        #expect(ms < Double(configuration.failoverTimeoutMillis), "took \(ms) ms")
        #expect(router.slotMap.master(ofSlot: slot) != victim)
        // The promoted master has no replica left: WAIT says so (the writes are made, not confirmed).
        #expect(first.replicasAcknowledged == 0)
        for _ in 0..<3 { #expect(try batch().replicasAcknowledged == 0) }

        #expect(cluster.waitUntilHealthy())
        let entries = try router.command(RedisArguments(["XRANGE", key, "-", "+"]), key: key).elements
        let stored = entries.compactMap { $0.elements.last?.elements.last?.text }
        let present = Set(stored)
        #expect(confirmed.allSatisfy { present.contains($0) }, "lost confirmed writes: \(confirmed.filter { !present.contains($0) }.prefix(5))")
        #expect(stored.count == present.count, "\(stored.count - present.count) duplicates")
        #expect(present == Set(written))
        print("redis-failover first_batch_after_kill_ms=\(Int(ms)) map_reads=\(router.refreshes) entries=\(stored.count) confirmed=\(confirmed.count)")
    }
}
