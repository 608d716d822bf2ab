import CHiredis
import SwiftPushRedis
import Testing

/// The pure parts of cluster routing: key → slot, a `CLUSTER SLOTS` reply → the slot map, an
/// error reply → what to do, and the producers' shard spread.
@Suite("Redis Cluster rules", .timeLimit(.minutes(1)))
struct ClusterRulesTests {
    @Test("CRC16/XMODEM and the slots of the cluster specification's examples")
    func slots() {
        #expect(RedisSlot.crc16("123456789") == 0x31C3)
        #expect(RedisSlot.of("foo") == 12182)
        #expect(RedisSlot.of("bar") == 5061)
        #expect(RedisSlot.of("hello") == 866)
        #expect(RedisSlot.of("") == 0)
    }

    @Test("Keys that share a hash tag share a slot; an empty or unclosed tag hashes the whole key")
    func hashTags() {
        #expect(RedisSlot.of("push:{7}") == RedisSlot.of("outcomes:{7}"))
        #expect(RedisSlot.of("push:{7}") == RedisSlot.of("7"))
        #expect(RedisSlot.of("{user1000}.following") == RedisSlot.of("{user1000}.followers"))
        #expect(RedisSlot.of("foo{}{bar}") == Int(RedisSlot.crc16("foo{}{bar}") & 0x3FFF))
        #expect(RedisSlot.of("foo{{bar}}zap") == RedisSlot.of("{bar"))
        #expect(RedisSlot.of("foo{bar}{zap}") == RedisSlot.of("bar"))
        #expect(RedisSlot.of("open{tag") == Int(RedisSlot.crc16("open{tag") & 0x3FFF))
    }

    @Test("Notification ids spread over shards by CRC16 mod N: stable, and every shard used")
    func shardSpread() {
        #expect(ShardSpread.shard(of: "n-1", count: 1) == "0")
        #expect(ShardSpread.shard(of: "123456789", count: 100) == String(0x31C3 % 100))
        var used = Set<String>()
        for i in 0..<600 { used.insert(ShardSpread.shard(of: "n-\(i)", count: 6)) }
        #expect(used == ["0", "1", "2", "3", "4", "5"])
    }

    /// Parses `resp` with hiredis's reader into a `RedisReply`.
    func reply(_ resp: String) -> RedisReply {
        let reader = redisReaderCreate()!
        defer { redisReaderFree(reader) }
        let bytes = Array(resp.utf8)
        _ = bytes.withUnsafeBufferPointer { b in b.withMemoryRebound(to: CChar.self) { redisReaderFeed(reader, $0.baseAddress, b.count) } }
        var raw: UnsafeMutableRawPointer?
        _ = redisReaderGetReply(reader, &raw)
        defer { freeReplyObject(raw) }
        return RedisReply(copying: UnsafePointer(raw!.assumingMemoryBound(to: redisReply.self)))
    }

    func bulk(_ s: String) -> String { "$\(s.utf8.count)\r\n\(s)\r\n" }
    func node(_ host: String, _ port: Int, replicas: [(String, Int)] = []) -> String {
        "*4\r\n" + bulk(host) + ":\(port)\r\n" + bulk("id-\(port)") + "*0\r\n"
    }
    func range(_ first: Int, _ last: Int, _ master: (String, Int), _ replicas: [(String, Int)] = []) -> String {
        "*\(3 + replicas.count)\r\n:\(first)\r\n:\(last)\r\n" + node(master.0, master.1) + replicas.map { node($0.0, $0.1) }.joined()
    }

    @Test("A CLUSTER SLOTS reply gives each slot its master, names the replicas, and an empty host means the node asked")
    func slotMap() throws {
        let asked = RedisNode(host: "10.0.0.9", port: 7000)
        let text = "*4\r\n" + range(0, 5460, ("10.0.0.1", 7000), [("10.0.0.4", 7000)])
            + range(5461, 10922, ("", 7001), [("10.0.0.5", 7000)])
            + range(10923, 16000, ("10.0.0.3", 7000), [("?", 7000)])
            + range(16001, 16383, ("10.0.0.3", 7000))
        let map = try RedisSlotMap(clusterSlots: reply(text), askedNode: asked)
        #expect(map.master(ofSlot: 0) == RedisNode(host: "10.0.0.1", port: 7000))
        #expect(map.master(ofSlot: 5461) == RedisNode(host: "10.0.0.9", port: 7001))
        #expect(map.master(ofSlot: 16383) == RedisNode(host: "10.0.0.3", port: 7000))
        #expect(map.masters.count == 3 && map.coversEverySlot)
        #expect(map.nodes.count == 5)
        var moved = map
        moved.assign(slot: 42, to: RedisNode(host: "10.0.0.4", port: 7000))
        #expect(moved.master(ofSlot: 42) == RedisNode(host: "10.0.0.4", port: 7000))
        #expect(moved.master(ofSlot: 41) == RedisNode(host: "10.0.0.1", port: 7000))
        #expect(moved.masters.count == 4 && moved.nodes.count == 5)
    }

    @Test("A reply that is not a slot table is an error, and a partial table leaves slots unserved")
    func badSlotTables() throws {
        let asked = RedisNode(host: "h", port: 1)
        #expect(throws: RedisError.self) { try RedisSlotMap(clusterSlots: .error("ERR This instance has cluster support disabled"), askedNode: asked) }
        #expect(throws: RedisError.self) { try RedisSlotMap(clusterSlots: .array([.array([.integer(5), .integer(2)])]), askedNode: asked) }
        let partial = try RedisSlotMap(clusterSlots: reply("*1\r\n" + range(0, 100, ("a", 1))), askedNode: asked)
        #expect(!partial.coversEverySlot && partial.master(ofSlot: 101) == nil)
    }

    @Test("MOVED and ASK name a slot and a node (an empty host is the answering node's); cluster-down and unblocked answers are retried; others are answers")
    func dispositions() {
        let from = RedisNode(host: "10.0.0.1", port: 7000)
        func d(_ text: String) -> RedisReplyDisposition { RedisReplyDisposition(.error(text), answeringNode: from) }
        #expect(d("MOVED 3999 127.0.0.1:6381") == .moved(slot: 3999, node: RedisNode(host: "127.0.0.1", port: 6381)))
        #expect(d("ASK 3999 10.0.0.2:7000") == .ask(slot: 3999, node: RedisNode(host: "10.0.0.2", port: 7000)))
        #expect(d("MOVED 12 :7002") == .moved(slot: 12, node: RedisNode(host: "10.0.0.1", port: 7002)))
        #expect(d("MOVED 12 ::1:7002") == .moved(slot: 12, node: RedisNode(host: "::1", port: 7002)))
        for retry in ["CLUSTERDOWN The cluster is down", "TRYAGAIN Multiple keys request during rehashing of slot",
                      "LOADING Redis is loading the dataset in memory", "MASTERDOWN Link with MASTER is down",
                      "READONLY You can't write against a read only replica.",
                      // A blocking read whose master was demoted in a failover, and CLIENT UNBLOCK's.
                      "UNBLOCKED force unblock from blocking operation, instance state changed (master -> replica?)",
                      "UNBLOCKED client unblocked via CLIENT UNBLOCK"] {
            #expect(d(retry) == .retryLater(retry))
            #expect(RedisReplyDisposition.isRedirectOrRetry(errorText: retry), "\(retry)")
        }
        #expect(RedisReplyDisposition.isRedirectOrRetry(errorText: "MOVED 3999 127.0.0.1:6381"))
        #expect(RedisReplyDisposition.isRedirectOrRetry(errorText: "ASK 3999 10.0.0.2:7000"))
        for answer in ["ERR wrong number of arguments", "NOGROUP No such key", "WRONGTYPE Operation against a key", "UNBLOCKEDX", ""] {
            #expect(!RedisReplyDisposition.isRedirectOrRetry(errorText: answer), "\(answer)")
        }
        #expect(d("ERR wrong number of arguments") == .answer)
        #expect(d("MOVED garbage") == .answer)
        #expect(d("MOVED 99999 h:1") == .answer)
        #expect(RedisReplyDisposition(.status("OK"), answeringNode: from) == .answer)
    }

    @Test("WAIT: the command, the count it answers, and a check that names what was missing")
    func wait() {
        let w = RedisWait(replicas: 1, timeoutMillis: 250)
        #expect(w.arguments.strings == ["WAIT", "1", "250"])
        #expect(RedisWait.acknowledged(by: .integer(2)) == 2 && RedisWait.acknowledged(by: .error("ERR x")) == 0)
        #expect(throws: Never.self) { try w.check(.integer(1), endpoint: "e") }
        #expect {
            try w.check(.integer(0), endpoint: "h:1")
        } throws: { error in
            let e = error as! RedisError
            return e.kind == .notReplicated && !e.connectionLost && e.description.contains("0 of 1 replicas")
        }
        #expect(RedisPipelineResult(replies: [], replicasAcknowledged: 0).isConfirmed(w) == false)
        #expect(RedisPipelineResult(replies: [], replicasAcknowledged: nil).isConfirmed(nil))
    }
}
