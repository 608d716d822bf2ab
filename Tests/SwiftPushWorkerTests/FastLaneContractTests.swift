import Foundation
import SwiftPushRedis
@testable import SwiftPushWorker
@testable import SwiftPushWorkerMachine
@testable import SwiftPushWorkerRedis
import Testing
import SwiftPushKeys

/// The fast lane's protocol (`FastLane`, the scripts' `f<id>` handling) held to the in-memory
/// queue: the same requests on `InMemoryShard` and on a real redis-server must give the same
/// answers, for entries of both lanes side by side: one read of both (fast first), claims,
/// a checkpoint, a 429 parked and promoted back into its lane, counted deliveries, listings of
/// own pending entries page by page, a take-back, a hand-back, a reclaim by another consumer
/// page by page, and the final settles that delete each entry from its own stream.
/// Skipped without redis-server.
@Suite("Fast lane contract", .timeLimit(.minutes(5)))
struct FastLaneContractTests {
    /// One side: two consumers' queues on one shard, adds to either lane, what it holds.
    struct Side {
        let queue: WorkQueue
        let other: WorkQueue
        let add: ([(String, String)], Bool) throws -> String
        let lengths: () throws -> (bulk: Int, fast: Int)
        let progressCount: () throws -> Int
        let outcomes: () throws -> [[(String, String)]]
    }

    func sides(_ server: WorkQueueContractTests.Server, shard name: String) throws -> (memory: Side, real: Side) {
        let redis = try server.connect()
        let shard = InMemoryShard()
        let memory = Side(queue: InMemoryWorkQueue(shard: shard, consumer: "w1"), other: InMemoryWorkQueue(shard: shard, consumer: "w2"),
                          add: { shard.add($0, fast: $1) },
                          lengths: { (shard.stream.count, shard.fastStream.count) },
                          progressCount: { shard.progress.count },
                          outcomes: { shard.outcomes.map(\.fields) })
        let keys = StreamKeys(shard: name)
        let configuration = RedisConfiguration(node: RedisNode(host: "127.0.0.1", port: server.port))
        func queue(_ consumer: String) throws -> WorkQueue {
            RedisStreamQueue(connector: try RedisConnector(configuration),
                             commands: RedisShardCommands(keys: keys, group: "senders", consumer: consumer, minIdleMillis: 60_000, guardTTLSeconds: 86_400))
        }
        let real = Side(queue: try queue("w1"), other: try queue("w2"),
                        add: { fields, fast in
                            let id = try redis.command(RedisArguments(["XADD", fast ? keys.fastStream : keys.stream, "*"] + fields.flatMap { [$0.0, $0.1] })).text ?? ""
                            return fast ? FastLane.prefix + id : id
                        },
                        lengths: { (Int(try redis.command("XLEN", keys.stream).integer ?? -1), Int(try redis.command("XLEN", keys.fastStream).integer ?? -1)) },
                        progressCount: { Int(try redis.command("HLEN", keys.progress).integer ?? -1) },
                        outcomes: {
                            try redis.command("XRANGE", keys.outcomes, "-", "+").elements.map { e in
                                let flat = e.elements.count > 1 ? e.elements[1].elements.map { $0.text ?? "" } : []
                                return stride(from: 0, to: flat.count - 1, by: 2).map { (flat[$0], flat[$0 + 1]) }
                            }
                        })
        return (memory, real)
    }

    static let tokens = (1...3).map { String(format: "%064x", $0) }
    enum ContractError: Error { case reply(String) }

    func scenario(_ side: Side) throws -> [String] {
        var seen: [String] = []
        // Created in the clock's order on both sides (the in-memory clock does not move).
        let bulk = try side.add([("id", "b"), ("app", "demo"), ("token", Self.tokens[0]), ("payload", "{}")], false)
        let fast = try side.add([("id", "f"), ("app", "demo"), ("token", Self.tokens[1]), ("payload", "{}")], true)
        let multi = try side.add([("v", "2"), ("id", "fm"), ("app", "demo"), ("tokens", Self.tokens.joined(separator: ",")), ("payload", "{}")], true)
        let slow = try side.add([("id", "s"), ("app", "demo"), ("token", Self.tokens[2]), ("payload", "{}")], true)
        var names = [bulk: "B1", fast: "F1", multi: "F2", slow: "F3"]
        func name(_ id: String) -> String { names[id] ?? (FastLane.isFast(id) ? "f?" : "?") }
        try side.queue.open()
        try side.other.open()
        guard case .entries(let read) = try side.queue.perform(.read(max: 10, blockMillis: 0)) else { throw ContractError.reply("read") }
        seen.append("read \(read.map { name($0.entryID) })")
        let claims = read.map { e in ClaimRequest(entryID: e.entryID, origin: nil, wantProgress: false, ids: [names[e.entryID] == "F2" ? "fm" : name(e.entryID)]) }
        guard case .claimed(let answers) = try side.queue.perform(.claim(claims)) else { throw ContractError.reply("claim") }
        seen.append("claimed \(answers.map(\.duplicates.count))")
        // A checkpoint of the fast multicast (token 0), and the third fast entry's 429: parked.
        var checkpoint = EntrySettlement(entryID: multi, kind: .multicast, destination: .record, count: 3, final: false,
                                         app: "demo", campaign: "", id: "fm", deliveries: 1)
        checkpoint.accepted = [0]
        var parked = EntrySettlement(entryID: slow, kind: .single, destination: .format1, count: 1, final: true,
                                     app: "demo", campaign: "", id: "s", deliveries: 1)
        parked.delayed = DelayedPart(dueMillis: 0, member: "\(slow):0", joinField: "",
                                     fields: [("id", "s"), ("app", "demo"), ("token", Self.tokens[2]), ("payload", "{}"), ("retries", "1"), ("origin", slow)]
                                        .map { DelayedPart.Field(name: Array($0.0.utf8), value: Array($0.1.utf8)) },
                                     pieces: [.init(index: 0, bytes: [])])
        guard case .settled(let m1, let s1, _) = try side.queue.perform(.settle([checkpoint, parked])) else { throw ContractError.reply("settle") }
        let l1 = try side.lengths()
        seen.append("checkpoint+park \(m1)/\(s1) progress \(try side.progressCount()) lengths \(l1.bulk)/\(l1.fast)")
        guard case .promoted(let promoted) = try side.queue.perform(.promote(nowMillis: 4_000_000_000_000, max: 10)) else { throw ContractError.reply("promote") }
        let l2 = try side.lengths()
        seen.append("promoted \(promoted) lengths \(l2.bulk)/\(l2.fast)")
        guard case .entries(let back) = try side.queue.perform(.read(max: 10, blockMillis: 0)) else { throw ContractError.reply("read 2") }
        for e in back { names[e.entryID] = "F4" }
        seen.append("read back \(back.map { "\(name($0.entryID)) origin=\(name(String(decoding: $0.value("origin") ?? [], as: UTF8.self)))" })")
        guard case .counted(let counts) = try side.queue.perform(.countDelivery([fast, bulk])) else { throw ContractError.reply("count") }
        seen.append("counted \(counts)")
        // Our own pending entries, listed a page of 2 at a time: the fast lane's first.
        var pages: [[String]] = []
        var after: String?
        while true {
            guard case .pending(let page) = try side.queue.perform(.ownPending(after: after, max: 2)) else { throw ContractError.reply("pending") }
            pages.append(page.map { "\(name($0.entryID)):\($0.deliveries)" })
            if page.count < 2 { break }
            after = page.last?.entryID
        }
        seen.append("own pending \(pages)")
        guard case .takenBack(let taken, let considered) = try side.queue.perform(.takeOwn([fast, multi] + back.map(\.entryID) + [bulk], budget: 100)) else {
            throw ContractError.reply("takeOwn")
        }
        seen.append("taken back \(considered) \(taken.map { "\(name($0.entryID)):\($0.deliveries):\($0.fieldCount)" })")
        guard case .handedBack(let handed) = try side.queue.perform(.handBack(idleMillis: 100_000_000_000)) else { throw ContractError.reply("handBack") }
        seen.append("handed back \(handed)")
        // Another consumer reclaims them, 2 a page.
        var cursor = "-"
        var reclaimed: [[String]] = []
        repeat {
            guard case .reclaimed(let next, let entries) = try side.other.perform(.reclaim(cursor: cursor, max: 2)) else { throw ContractError.reply("reclaim") }
            reclaimed.append(entries.map { name($0.entryID) })
            cursor = next
        } while cursor != "-" && reclaimed.count < 10
        seen.append("reclaimed \(reclaimed)")
        // The other consumer settles everything whole.
        func single(_ entry: String, _ id: String) -> EntrySettlement {
            var s = EntrySettlement(entryID: entry, kind: .single, destination: .format1, count: 1, final: true, app: "demo", campaign: "", id: id, deliveries: 2)
            var o = OutcomeRecord(id: id, entryID: entry, kind: .accepted)
            (o.status, o.app) = (200, "demo")
            s.others = [.init(index: 0, outcome: o)]
            return s
        }
        var rest = EntrySettlement(entryID: multi, kind: .multicast, destination: .record, count: 3, final: true,
                                   app: "demo", campaign: "", id: "fm", deliveries: 2)
        rest.accepted = [0, 1, 2]
        let finals = [single(fast, "f"), rest, single(bulk, "b")] + back.map { single($0.entryID, "s") }
        guard case .settled(let m2, let s2, _) = try side.other.perform(.settle(finals)) else { throw ContractError.reply("settle 2") }
        let l3 = try side.lengths()
        seen.append("final \(m2)/\(s2) progress \(try side.progressCount()) lengths \(l3.bulk)/\(l3.fast)")
        guard case .backlog(let pending, let lag) = try side.queue.perform(.backlog) else { throw ContractError.reply("backlog") }
        seen.append("backlog \(pending) \(lag.map(String.init) ?? "nil")")
        for o in try side.outcomes() {
            for r in try OutcomeRow.rows(streamID: "x", fields: o) {
                seen.append("\(name(r.entry)) \(r.id) \(r.outcome) n=\(r.count) at=\(r.indexes ?? String(r.index ?? -1))")
            }
        }
        return seen
    }

    @Test("Both lanes through every request: the in-memory queue and the Redis scripts agree, and fast entries stay in their lane")
    func sameAnswers() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/redis-server") else { return }
        let server = try #require(WorkQueueContractTests.Server())
        let (memory, real) = try sides(server, shard: "fastcontract")
        let expected = try scenario(memory)
        let got = try scenario(real)
        #expect(got == expected)
        // What both must say, spelled out.
        #expect(expected.first == "read [\"F1\", \"F2\", \"F3\", \"B1\"]")
        #expect(expected.contains("checkpoint+park 2/0 progress 1 lengths 1/2"))
        #expect(expected.contains("promoted 1 lengths 1/3"))
        #expect(expected.contains("read back [\"F4 origin=F3\"]"))
        #expect(expected.contains("counted [Optional(2), Optional(2)]"))
        #expect(expected.contains("own pending [[\"F1:2\", \"F2:1\"], [\"F4:1\", \"B1:2\"], []]"))
        #expect(expected.contains("taken back 4 [\"F1:2:4\", \"F2:1:5\", \"F4:1:6\", \"B1:2:4\"]"))
        #expect(expected.contains("handed back 4"))
        #expect(expected.contains("reclaimed [[\"F1\", \"F2\"], [\"F4\", \"B1\"], []]"))
        #expect(expected.contains("final 4/0 progress 0 lengths 0/0"))
        #expect(expected.contains("backlog 0 0"))
    }
}
