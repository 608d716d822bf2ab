import Foundation
import PushCore
import SwiftPushRedis
import SwiftPushWorker
import TestProcessSupport
#if canImport(Glibc)
import Glibc
#endif

/// A `redis-server` of the test's own on a free loopback port, without persistence; killed on
/// `stop` or deinit, and with the test process whatever ends it (`ChildProcess`).
final class RedisServerProcess: @unchecked Sendable {
    /// The port it listens on.
    let port: Int
    private let process: ChildProcess
    private let directory: String

    /// Starts it (on `port`, else a free one) and waits (at most 20 s) until it answers PING.
    init(port: Int? = nil) throws {
        self.port = port ?? TestNet.freePort()
        directory = NSTemporaryDirectory() + "swiftpush-status-redis-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let args = ["/usr/bin/redis-server", "--port", String(self.port), "--bind", "127.0.0.1", "--dir", directory,
                    "--save", "", "--appendonly", "no", "--logfile", directory + "/redis.log"]
        // ChildProcess gives the child none of our descriptors: a server that inherited the test
        // runner's event pipe would keep `swift test` waiting for its end.
        process = try ChildProcess(args[0], Array(args.dropFirst()))
        let port = self.port
        guard waitUntil(seconds: 20, { (try? TestRedis.connection(port: port).command("PING")) == .status("PONG") }) else {
            stop()
            throw TestFailure("redis-server did not answer PING on \(port)")
        }
    }

    /// A new connection to it.
    func connect() throws -> RedisConnection { try TestRedis.connection(port: port) }

    /// Runs one command, failing the test's setup on an error reply.
    @discardableResult
    func run(_ args: String...) throws -> RedisReply {
        let reply = try connect().command(RedisArguments(args))
        if case .error(let e) = reply { throw TestFailure("\(args.joined(separator: " ")): \(e)") }
        return reply
    }

    /// Kills it (SIGKILL: nothing of it needs to survive) and reaps it (bounded).
    func stop() {
        process.kill()
        TestFiles.remove(directory)
    }

    deinit { stop() }
}

/// A setup step that went wrong.
struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Waits until `condition` holds (checked every 2 ms) or `seconds` pass; returns whether it held.
@discardableResult
func waitUntil(seconds: Double, _ condition: () -> Bool) -> Bool {
    let until = MonotonicTime.nanos() + UInt64(seconds * 1e9)
    while !condition() {
        if MonotonicTime.nanos() >= until { return false }
        usleep(2_000) // between two looks at a condition that signals no one
    }
    return true
}
