import Foundation
import SwiftPushRedis
import TestProcessSupport
@testable import SwiftPushWorker
@testable import SwiftPushWorkerMachine
@testable import SwiftPushWorkerRedis
import Testing
import SwiftPushKeys

/// The in-memory queue the machine's unit tests run on (`InMemoryWorkQueue`) against the real
/// thing: the same requests, in the same order, on `InMemoryShard` and on a real `redis-server`
/// (`RedisStreamQueue`, the Lua scripts), must give the same answers and leave the same
/// outcomes, progress and stream behind. Skipped without redis-server.
@Suite("WorkQueue contract", .timeLimit(.minutes(5)))
struct WorkQueueContractTests {
    /// A redis-server on a free loopback port, no persistence, stopped at the end.
    final class Server {
        let process: ChildProcess
        let port: Int

        init?() {
            guard let path = ["/usr/bin/redis-server", "/usr/local/bin/redis-server"].first(where: FileManager.default.isExecutableFile),
                  let port = LoopbackPort.unused() else { return nil }
            self.port = port
            guard let process = try? ChildProcess(path, ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]) else {
                return nil
            }
            self.process = process
        }

        // SIGKILL (nothing of it needs to survive), reaped with a bound (ChildProcess's deinit).
        deinit { process.kill() }

        /// A connection once the server answers (it announces readiness to nobody: retried for
        /// up to 30 s while it runs, since a loaded machine can take seconds to start it; a
        /// server that exited, say because its port was taken meanwhile, fails at once).
        func connect() throws -> RedisConnection {
            let connector = try RedisConnector(RedisConfiguration(node: RedisNode(host: "127.0.0.1", port: port)))
            let deadline = Date().addingTimeInterval(30)
            while Date() < deadline && process.isRunning {
                if let c = try? connector.connect() { return c }
                usleep(25_000)  // between attempts: the server gives no other sign it is up
            }
            return try connector.connect()
        }
    }

    /// One side of the contract: a queue, a way to add entries, and what it holds afterwards.
    struct Side {
        let queue: WorkQueue
        let add: ([(String, String)]) throws -> String
        let outcomes: () throws -> [[(String, String)]]
        let length: () throws -> Int
        let progressCount: () throws -> Int
        /// Forgets an entry's progress, as a failover to a replica that lacked it would.
        let dropProgress: (String) throws -> Void
        let unregistered: () throws -> Int
    }

    /// The two sides on a fresh in-memory shard and on `server` (shard `shard`).
    func sides(_ server: Server, shard name: String) throws -> (memory: Side, real: Side) {
        let redis = try server.connect()
        let shard = InMemoryShard()
        let memory = Side(queue: InMemoryWorkQueue(shard: shard, consumer: "w1"),
                          add: { shard.add($0) },
                          outcomes: { shard.outcomes.map(\.fields) },
                          length: { shard.length },
                          progressCount: { shard.progress.count },
                          dropProgress: { shard.progress[$0] = nil },
                          unregistered: { shard.unregistered.count })
        let keys = StreamKeys(shard: name)
        let configuration = RedisConfiguration(node: RedisNode(host: "127.0.0.1", port: server.port))
        let commands = RedisShardCommands(keys: keys, group: "senders", consumer: "w1", minIdleMillis: 60_000, guardTTLSeconds: 86_400)
        let real = Side(queue: RedisStreamQueue(connector: try RedisConnector(configuration), commands: commands),
                        add: { fields in
                            try redis.command(RedisArguments(["XADD", keys.stream, "*"] + fields.flatMap { [$0.0, $0.1] })).text ?? ""
                        },
                        outcomes: {
                            try redis.command("XRANGE", keys.outcomes, "-", "+").elements.map { e in
                                let flat = e.elements.count > 1 ? e.elements[1].elements.map { $0.text ?? "" } : []
                                return stride(from: 0, to: flat.count - 1, by: 2).map { (flat[$0], flat[$0 + 1]) }
                            }
                        },
                        length: { Int(try redis.command("XLEN", keys.stream).integer ?? -1) },
                        progressCount: { Int(try redis.command("HLEN", keys.progress).integer ?? -1) },
                        dropProgress: { _ = try redis.command("HDEL", keys.progress, $0) },
                        unregistered: { Int(try redis.command("XLEN", keys.unregistered).integer ?? -1) })
        return (memory, real)
    }

    static let tokens = (1...3).map { String(format: "%064x", $0) }

    /// Runs the scenario on `side`; returns what it saw, with entry ids replaced by their order
    /// of creation (the two sides' ids differ).
    func scenario(_ side: Side) throws -> [String] {
        var seen: [String] = []
        let single = try side.add([("id", "a"), ("app", "demo"), ("token", Self.tokens[0]), ("payload", "{}")])
        let multi = try side.add([("v", "2"), ("id", "m"), ("app", "demo"), ("tokens", Self.tokens.joined(separator: ",")), ("payload", "{}")])
        let dup = try side.add([("id", "a"), ("app", "demo"), ("token", Self.tokens[1]), ("payload", "{}")])
        let whole = try side.add([("v", "2"), ("id", "w"), ("app", "demo"), ("tokens", Self.tokens.joined(separator: ",")), ("payload", "{}")])
        let goneEntry = try side.add([("id", "g"), ("app", "demo"), ("token", Self.tokens[2]), ("payload", "{}"), ("campaign", "c")])
        let names = [single: "E1", multi: "E2", dup: "E3", whole: "E4", goneEntry: "E5"]
        try side.queue.open()
        guard case .entries(let read) = try side.queue.perform(.read(max: 10, blockMillis: 0)) else { throw ContractError.reply }
        seen.append("read \(read.map { names[$0.entryID] ?? "?" })")
        let claims = [ClaimRequest(entryID: single, origin: nil, wantProgress: false, ids: ["a"]),
                      ClaimRequest(entryID: multi, origin: nil, wantProgress: true, ids: ["m"]),
                      ClaimRequest(entryID: dup, origin: nil, wantProgress: false, ids: ["a"])]
        guard case .claimed(let answers) = try side.queue.perform(.claim(claims)) else { throw ContractError.reply }
        seen.append("claimed \(answers.map { a in a.duplicates.map { "\($0.position):\(names[$0.owner] ?? $0.owner)" } })")
        // The short claim form (fresh entries, one id each): a duplicate of "m" found there too.
        let short = [ClaimRequest(entryID: whole, origin: nil, wantProgress: false, ids: ["w"]),
                     ClaimRequest(entryID: goneEntry, origin: nil, wantProgress: false, ids: ["m"])]
        guard case .claimed(let shortAnswers) = try side.queue.perform(.claim(short)) else { throw ContractError.reply }
        seen.append("claimed short \(shortAnswers.map { a in a.duplicates.map { "\($0.position):\(names[$0.owner] ?? $0.owner)" } })")
        // A checkpoint of the multicast (token 0 accepted), then everything final.
        var checkpoint = EntrySettlement(entryID: multi, kind: .multicast, destination: .record, count: 3, final: false,
                                         app: "demo", campaign: "c", id: "m", deliveries: 1)
        checkpoint.accepted = [0]
        guard case .settled(let m1, let s1, _) = try side.queue.perform(.settle([checkpoint])) else { throw ContractError.reply }
        seen.append("checkpoint \(m1)/\(s1) progress \(try side.progressCount()) length \(try side.length())")
        var rest = EntrySettlement(entryID: multi, kind: .multicast, destination: .record, count: 3, final: true,
                                   app: "demo", campaign: "c", id: "m", deliveries: 1)
        // Index 0 again (a retried settle): filtered by the progress, not recorded twice.
        rest.accepted = [0, 1]
        var gone = OutcomeRecord(id: "m", entryID: multi, kind: .rejected)
        (gone.status, gone.reason, gone.token, gone.app, gone.timestampMs) = (410, "Unregistered", Self.tokens[2], "demo", 5)
        rest.others = [.init(index: 2, outcome: gone)]
        var first = EntrySettlement(entryID: single, kind: .single, destination: .format1, count: 1, final: true,
                                    app: "demo", campaign: "", id: "a", deliveries: 1)
        var accepted = OutcomeRecord(id: "a", entryID: single, kind: .accepted)
        (accepted.status, accepted.app, accepted.token) = (200, "demo", Self.tokens[0])
        first.others = [.init(index: 0, outcome: accepted)]
        var second = EntrySettlement(entryID: dup, kind: .single, destination: .format1, count: 1, final: true,
                                     app: "demo", campaign: "", id: "a", deliveries: 1)
        var duplicate = OutcomeRecord(id: "a", entryID: dup, kind: .rejected)
        (duplicate.reason, duplicate.app) = ("DuplicateId", "demo")
        second.others = [.init(index: 0, outcome: duplicate)]
        // A multicast all accepted at once (the script's short record way), a single's 410 (the
        // short single form, with its unregistered row).
        var all = EntrySettlement(entryID: whole, kind: .multicast, destination: .record, count: 3, final: true,
                                  app: "demo", campaign: "", id: "w", deliveries: 2)
        all.accepted = [0, 1, 2]
        all.repeats = 1
        var third = EntrySettlement(entryID: goneEntry, kind: .single, destination: .format1, count: 1, final: true,
                                    app: "demo", campaign: "c", id: "g", deliveries: 1)
        var unregistered = OutcomeRecord(id: "g", entryID: goneEntry, kind: .rejected)
        (unregistered.status, unregistered.reason, unregistered.token, unregistered.app, unregistered.campaign) = (410, "Unregistered", Self.tokens[2], "demo", "c")
        (unregistered.timestampMs, unregistered.attempts, unregistered.latencyUs, unregistered.apnsID) = (1234, 2, 77, "a-b")
        (unregistered.detail, unregistered.maybeDelivered) = ("gone \"now\"", true)
        third.others = [.init(index: 0, outcome: unregistered)]
        let batch = [rest, first, second, all, third]
        guard case .settled(let m2, let s2, _) = try side.queue.perform(.settle(batch)) else { throw ContractError.reply }
        seen.append("final \(m2)/\(s2) progress \(try side.progressCount()) length \(try side.length()) unregistered \(try side.unregistered())")
        // The same call again (its reply lost): everything skipped, nothing written.
        guard case .settled(let m3, let s3, _) = try side.queue.perform(.settle(batch)) else { throw ContractError.reply }
        seen.append("again \(m3)/\(s3) unregistered \(try side.unregistered())")
        guard case .backlog(let pending, _) = try side.queue.perform(.backlog) else { throw ContractError.reply }
        seen.append("pending \(pending)")
        for o in try side.outcomes() {
            // Format 1 field for field (the script writes the names of the short form itself).
            if o.first?.1 == "1" {
                seen.append(o.map { "\($0.0)=\(names[$0.1] ?? $0.1)" }.joined(separator: " "))
            }
            // Records byte for byte (the script's short record way included).
            if o.first?.1 == "3", var records = o.first(where: { $0.0 == "records" })?.1 {
                for (id, name) in names { records = records.replacingOccurrences(of: id, with: name) }
                seen.append(records)
            }
            let rows = try OutcomeRow.rows(streamID: "x", fields: o)
            for r in rows {
                seen.append("\(names[r.entry] ?? r.entry) \(r.id) \(r.outcome) \(r.status) \(r.reason) n=\(r.count) at=\(r.indexes ?? String(r.index ?? -1)) token=\(r.token)")
            }
        }
        return seen
    }

    enum ContractError: Error { case reply }

    @Test("The in-memory queue answers as the Redis scripts do: reads, claims with duplicates, checkpoints, final settles, retried settles")
    func sameAnswers() throws {
        // Without redis-server (scripts/install-deps.sh installs it) there is nothing to hold
        // the in-memory queue to; with it, the server must start.
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/redis-server") else { return }
        let server = try #require(Server())
        let (memory, real) = try sides(server, shard: "contract")
        let expected = try scenario(memory)
        let got = try scenario(real)
        #expect(got == expected)
        #expect(got.count > 8 && got.first == "read [\"E1\", \"E2\", \"E3\", \"E4\", \"E5\"]")
        // What both must say, spelled out (so that the two cannot agree on something wrong).
        #expect(expected.contains("claimed [[], [], [\"0:E1\"]]"))
        #expect(expected.contains("claimed short [[], [\"0:E2\"]]"))
        #expect(expected.contains("checkpoint 1/0 progress 1 length 5"))
        #expect(expected.contains("final 5/0 progress 0 length 0 unregistered 2"))
        #expect(expected.contains("again 0/5 unregistered 2"))
        #expect(expected.filter { $0.hasPrefix("E2 m ACCEPTED") }.count == 2)
        #expect(expected.contains("E4 w ACCEPTED 200  n=3 at=0-2 token="))
        #expect(expected.contains { $0.contains(#"{"entry":"E4","kind":"multicast","id":"w","app":"demo","deliveries":2,"count":3,"accepted":3,"accepted_at":"0-2","repeats":1,"final":true}"#) })
        #expect(expected.contains("v=1 id=g entry=E5 outcome=REJECTED status=410 reason=Unregistered app=demo campaign=c detail=gone \"now\" "
                                  + "apns_id=a-b token=\(Self.tokens[2]) attempts=2 deliveries=1 worker=w1 latency_us=77 timestamp_ms=1234 maybe_delivered=1"))
    }

    /// A multicast of 4 checkpointed (0 accepted), its progress then lost, settled final with
    /// the rest (1, 2 accepted; 3 a 410): short, kept pending with what it recorded as progress;
    /// then settled final again with the lost one: whole.
    func shortScenario(_ side: Side) throws -> [String] {
        var seen: [String] = []
        let tokens = (1...4).map { String(format: "%064x", $0) }
        let multi = try side.add([("v", "2"), ("id", "m"), ("app", "demo"), ("tokens", tokens.joined(separator: ",")), ("payload", "{}")])
        try side.queue.open()
        guard case .entries(let read) = try side.queue.perform(.read(max: 10, blockMillis: 0)), read.count == 1 else { throw ContractError.reply }
        func settlement(final: Bool, accepted: [Int]) -> EntrySettlement {
            var s = EntrySettlement(entryID: multi, kind: .multicast, destination: .record, count: 4, final: final,
                                    app: "demo", campaign: "", id: "m", deliveries: 1)
            s.accepted = accepted
            return s
        }
        guard case .settled(let m1, _, let short1) = try side.queue.perform(.settle([settlement(final: false, accepted: [0])])) else { throw ContractError.reply }
        seen.append("checkpoint \(m1) short \(short1.count) progress \(try side.progressCount())")
        try side.dropProgress(multi)
        var rest = settlement(final: true, accepted: [1, 2])
        var gone = OutcomeRecord(id: "m", entryID: multi, kind: .rejected)
        (gone.status, gone.reason, gone.token, gone.app, gone.timestampMs) = (410, "Unregistered", tokens[3], "demo", 5)
        rest.others = [.init(index: 3, outcome: gone)]
        guard case .settled(let m2, let s2, let short2) = try side.queue.perform(.settle([rest])) else { throw ContractError.reply }
        seen.append("final without the checkpoint \(m2)/\(s2) short \(short2 == [multi]) progress \(try side.progressCount()) length \(try side.length())")
        guard case .settled(let m3, _, let short3) = try side.queue.perform(.settle([settlement(final: true, accepted: [0])])) else { throw ContractError.reply }
        seen.append("final with the lost one \(m3) short \(short3.count) progress \(try side.progressCount()) length \(try side.length())")
        for o in try side.outcomes() {
            for r in try OutcomeRow.rows(streamID: "x", fields: o) {
                seen.append("\(r.id) \(r.outcome) \(r.reason) n=\(r.count) at=\(r.indexes ?? String(r.index ?? -1)) final=\(o.contains { $0.1.contains("\"final\":true") })")
            }
        }
        return seen
    }

    @Test("A final settle that finds a checkpoint gone (a failover) records what it has as a checkpoint and says so; the entry stays pending until every notification has an outcome")
    func shortFinal() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/redis-server") else { return }
        let server = try #require(Server())
        let (memory, real) = try sides(server, shard: "short")
        let expected = try shortScenario(memory)
        let got = try shortScenario(real)
        #expect(got == expected)
        #expect(expected.contains("checkpoint 1 short 0 progress 1"))
        #expect(expected.contains("final without the checkpoint 1/0 short true progress 1 length 1"))
        #expect(expected.contains("final with the lost one 1 short 0 progress 0 length 0"))
        // Token 0 has two ACCEPTED rows (the lost checkpoint's, still in this stream since only
        // the progress was dropped here, and the final one), every other token one.
        #expect(expected.filter { $0.hasPrefix("m ACCEPTED") }.count == 3)
    }
}
