import Foundation
import SwiftPushRedis
@testable import SwiftPushWorker
@testable import SwiftPushWorkerMachine
@testable import SwiftPushWorkerRedis
import Testing
import SwiftPushKeys

/// Issue 31's take-back and hand-back on a real redis-server against the in-memory queue (and the
/// records of written deliveries a reclaim reads back, `RedisStreamScripts.markWritten`): the
/// budgeted bulk take-back (`RedisStreamScripts.takeOwn`) and the stop's hand-back
/// (`RedisStreamScripts.handBack`: idle time set to years, delivery count unchanged, so that
/// another consumer's reclaim takes the entries at once). Skipped without redis-server.
@Suite("Take-back contract")
struct TakeBackContractTests {
    /// One side: this consumer's queue (w1), another consumer's (w2, min-idle a minute), and a
    /// way to add entries.
    struct Side {
        let mine: WorkQueue
        let other: WorkQueue
        let add: ([(String, String)]) throws -> String
    }

    func realSide(_ server: WorkQueueContractTests.Server, shard: String) throws -> Side {
        let redis = try server.connect()
        let keys = StreamKeys(shard: shard)
        let configuration = RedisConfiguration(node: RedisNode(host: "127.0.0.1", port: server.port))
        func queue(_ consumer: String) throws -> WorkQueue {
            RedisStreamQueue(connector: try RedisConnector(configuration),
                             commands: RedisShardCommands(keys: keys, group: "senders", consumer: consumer, minIdleMillis: 60_000, guardTTLSeconds: 86_400))
        }
        return Side(mine: try queue("w1"), other: try queue("w2"), add: { fields in
            try redis.command(RedisArguments(["XADD", keys.stream, "*"] + fields.flatMap { [$0.0, $0.1] })).text ?? ""
        })
    }

    func memorySide() -> Side {
        let shard = InMemoryShard()
        return Side(mine: InMemoryWorkQueue(shard: shard, consumer: "w1", minIdleMillis: 60_000),
                    other: InMemoryWorkQueue(shard: shard, consumer: "w2", minIdleMillis: 60_000), add: { shard.add($0) })
    }

    /// The scenario; what it saw, with entry ids replaced by their order of creation.
    func scenario(_ side: Side) throws -> [String] {
        var seen: [String] = []
        var names: [String: String] = [:]
        var ids: [String] = []
        for i in 0..<4 {
            let id = try side.add([("id", "s\(i)"), ("app", "demo"), ("token", String(format: "%064x", i + 1)), ("payload", "{}")])
            ids.append(id)
            names[id] = "E\(ids.count)"
        }
        // A multicast of 60 text tokens: 60 * 65 bytes / 33 counts 120 against the budget.
        let tokens = (0..<60).map { String(format: "%064x", 100 + $0) }.joined(separator: ",")
        let multi = try side.add([("v", "2"), ("id", "m"), ("app", "demo"), ("tokens", tokens), ("payload", "{}")])
        ids.append(multi)
        names[multi] = "E5"
        for i in 4..<6 {
            let id = try side.add([("id", "s\(i)"), ("app", "demo"), ("token", String(format: "%064x", i + 1)), ("payload", "{}")])
            ids.append(id)
            names[id] = "E\(ids.count)"
        }
        try side.mine.open()
        try side.other.open()
        guard case .entries(let read) = try side.mine.perform(.read(max: 10, blockMillis: 0)) else { throw ContractError.reply }
        seen.append("read \(read.count)")
        guard case .pending(let listed) = try side.mine.perform(.ownPending(after: nil, max: 1000)) else { throw ContractError.reply }
        seen.append("listed \(listed.map { names[$0.entryID] ?? "?" })")
        // A budget of 100: the four singles (4), then the multicast does not fit: stop there.
        guard case .takenBack(let first, let considered) = try side.mine.perform(.takeOwn(ids, budget: 100)) else { throw ContractError.reply }
        seen.append("took \(first.map { names[$0.entryID] ?? "?" }) considered \(considered)")
        // The first entry is always taken, whatever the budget.
        guard case .takenBack(let second, let c2) = try side.mine.perform(.takeOwn(Array(ids[4...]), budget: 1)) else { throw ContractError.reply }
        seen.append("took \(second.map { names[$0.entryID] ?? "?" }) considered \(c2)")
        guard case .takenBack(let rest, let c3) = try side.mine.perform(.takeOwn(Array(ids[5...]), budget: 5000)) else { throw ContractError.reply }
        seen.append("took \(rest.map { names[$0.entryID] ?? "?" }) considered \(c3) deliveries \(rest.map(\.deliveries))")
        // Another consumer cannot reclaim them: not idle for min-idle.
        guard case .reclaimed(_, let none) = try side.other.perform(.reclaim(cursor: "-", max: 100)) else { throw ContractError.reply }
        seen.append("reclaimed before \(none.count)")
        // One is counted as sent again (2), then all are handed back.
        guard case .counted(let counts) = try side.mine.perform(.countDelivery([ids[0]])) else { throw ContractError.reply }
        seen.append("counted \(counts)")
        // Written deliveries recorded (E1's twice, E2's once and then dropped, as a final settle does).
        guard case .done = try side.mine.perform(.markWritten(add: [ids[0], ids[1], ids[0]], drop: [])),
              case .done = try side.mine.perform(.markWritten(add: [], drop: [ids[1]])) else { throw ContractError.reply }
        guard case .handedBack(let n) = try side.mine.perform(.handBack(idleMillis: ShardMachine.handBackIdleMillis)) else { throw ContractError.reply }
        seen.append("handed back \(n)")
        guard case .handedBack(let again) = try side.mine.perform(.handBack(idleMillis: ShardMachine.handBackIdleMillis)) else { throw ContractError.reply }
        seen.append("handed back again \(again)")
        // At once, another consumer's reclaim takes every one, their counts as they were.
        guard case .reclaimed(_, let all) = try side.other.perform(.reclaim(cursor: "-", max: 100)) else { throw ContractError.reply }
        seen.append("reclaimed \(all.map { "\(names[$0.entryID] ?? "?"):\($0.deliveries):\($0.written)" })")
        guard case .pending(let mineAfter) = try side.mine.perform(.ownPending(after: nil, max: 1000)) else { throw ContractError.reply }
        seen.append("mine after \(mineAfter.count)")
        return seen
    }

    enum ContractError: Error { case reply }

    @Test("Bulk take-back within a budget, and the stop's hand-back, answer on Redis as in memory")
    func sameAnswers() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/redis-server") else { return }
        let server = try #require(WorkQueueContractTests.Server())
        let expected = try scenario(memorySide())
        let got = try scenario(try realSide(server, shard: "takeback"))
        #expect(got == expected)
        // Spelled out, so that the two cannot agree on something wrong.
        #expect(expected == [
            "read 7",
            "listed [\"E1\", \"E2\", \"E3\", \"E4\", \"E5\", \"E6\", \"E7\"]",
            "took [\"E1\", \"E2\", \"E3\", \"E4\"] considered 4",
            "took [\"E5\"] considered 1",
            "took [\"E6\", \"E7\"] considered 2 deliveries [1, 1]",
            "reclaimed before 0",
            "counted [Optional(2)]",
            "handed back 7",
            "handed back again 7",
            "reclaimed [\"E1:2:2\", \"E2:1:0\", \"E3:1:0\", \"E4:1:0\", \"E5:1:0\", \"E6:1:0\", \"E7:1:0\"]",
            "mine after 0",
        ], "\(expected)")
    }
}
