import Foundation
import Testing
import SwiftPushRedis
import TestProcessSupport
@testable import SwiftPushWorkerMachine
@testable import SwiftPushWorkerRedis
import SwiftPushKeys

/// A blocking read that Redis ends with `-UNBLOCKED` (a Redis Cluster master demoted to a
/// replica during a failover unblocks its blocked clients so; `CLIENT UNBLOCK id ERROR` does
/// the same on any server) is an outage, as a redirect is: the worker reconnects (to the slot's
/// master as a fresh map names it) and reads again, rather than count a failed read and fall
/// back to re-reading its own pending entries. Against a real redis-server; skipped without one.
@Suite("A read ended by UNBLOCKED", .timeLimit(.minutes(2)))
struct UnblockedReadTests {
    @Test("XREADGROUP ... BLOCK answered -UNBLOCKED is a lost connection, and the next connection reads")
    func unblockedReadIsAnOutage() async throws {
        try await onOwnThread { try Self.unblockedReadIsAnOutageBlocking() }
    }

    /// The id of the client blocked in XREADGROUP, from `CLIENT LIST`'s lines; nil while none is.
    static func blockedReader(in list: String) -> String? {
        for line in list.split(separator: "\n") {
            let fields = Dictionary(line.split(separator: " ").compactMap { pair -> (Substring, Substring)? in
                guard let eq = pair.firstIndex(of: "=") else { return nil }
                return (pair[..<eq], pair[pair.index(after: eq)...])
            }, uniquingKeysWith: { a, _ in a })
            if fields["cmd"] == "xreadgroup", fields["flags"]?.contains("b") == true, let id = fields["id"] { return String(id) }
        }
        return nil
    }

    static func unblockedReadIsAnOutageBlocking() throws {
        guard let server = WorkQueueContractTests.Server() else { return }
        let admin = try server.connect()
        let keys = StreamKeys(shard: "unblocked")
        let commands = RedisShardCommands(keys: keys, group: "senders", consumer: "w1", minIdleMillis: 60_000, guardTTLSeconds: 86_400)
        let queue = RedisStreamQueue(connector: try RedisConnector(RedisConfiguration(node: RedisNode(host: "127.0.0.1", port: server.port))),
                                     commands: commands)
        try queue.open()
        // Another thread waits for the read to block (Redis announces it to nobody: CLIENT LIST
        // polled), then ends it as a failover's demotion would.
        nonisolated(unsafe) let other = admin
        let done = DispatchSemaphore(value: 0)
        final class Box: @unchecked Sendable { var unblocked: RedisReply? }
        let box = Box()
        Thread.detachNewThread {
            defer { done.signal() }
            let deadline = Date().addingTimeInterval(30)
            while Date() < deadline {
                if let list = try? other.command("CLIENT", "LIST").text, let id = Self.blockedReader(in: list) {
                    box.unblocked = try? other.command("CLIENT", "UNBLOCK", id, "ERROR")
                    return
                }
                // The only sign that the read has blocked is CLIENT LIST's flag: Redis tells no
                // client when another blocks (no event, no keyspace notification, and MONITOR's
                // feed needs a reader this client does not have), so it is polled. The pause
                // keeps the poll from taking a core while the reader connects; the deadline
                // above bounds it.
                usleep(5_000)
            }
        }
        var lost: QueueError?
        do throws(QueueError) {
            _ = try queue.perform(.read(max: 10, blockMillis: 10_000))
        } catch {
            lost = error
        }
        _ = done.wait(timeout: .now() + 30)
        #expect(box.unblocked == .integer(1), "the read was not seen blocked: \(String(describing: box.unblocked))")
        let e = try #require(lost, "the read ended without an error")
        #expect(e.description.contains("UNBLOCKED"), "\(e.description)")
        #expect(e.connectionLost, "UNBLOCKED taken for the read's own failure: \(e.description)")
        // What the worker does next: a new connection, set up again, reads what came meanwhile.
        _ = try admin.command("XADD", keys.stream, "*", "id", "after")
        try queue.open()
        guard case .entries(let entries) = try queue.perform(.read(max: 10, blockMillis: 0)) else {
            Issue.record("no entries reply")
            return
        }
        #expect(entries.count == 1)
    }
}
