import Foundation
import SwiftPushStatus
import SwiftPushRedis
import SwiftPushWorker
@testable import SwiftPushWorkerHTTP
import Testing
import TestProcessSupport

/// The worker's HTTP server on real sockets: its routes, HTTP/1.1 framing and keep-alive, and
/// the status endpoints over a real redis-server. (The latency bound with 50 idle connections is
/// checked against a real worker process in Tests/status/run.sh, where no other test shares
/// the process's threads.)
@Suite("WorkerHTTPServer", .serialized, .timeLimit(.minutes(5)))
struct WorkerHTTPServerTests {
    /// A server over `redis` (seeded as the reader's tests seed it) and fresh metrics; its feed
    /// reads through a connection of its own, so that stopping `redis` ends nothing else.
    static func server(_ redis: RedisServerProcess, metrics: WorkerMetrics = WorkerMetrics(), live: UInt64 = 10_000) async throws -> WorkerHTTPServer {
        let port = redis.port
        let reader = StatusReader(group: "senders", shards: .discovered(including: [], rescanMillis: 60_000)) {
            try TestRedis.router(port: port)
        }
        var routes = WorkerRoutes(metrics: metrics, feed: StatusFeed(reader: reader, intervalMillis: 200)) {
            LocalWorkerStatus(consumer: "me", shards: ["0"], live: true, outcomes: [], counters: ["read": 3], gauges: [:])
        }
        routes.liveWithinMillis = live
        return try await WorkerHTTPServer.start(host: "127.0.0.1", port: 0, routes: routes)
    }

    @Test("/metrics is WorkerMetrics' text; /healthz is ok while the loop publishes and 503 when it does not; other paths 404")
    func routes() async throws {
        let redis = try await onOwnThread { try RedisServerProcess() }
        defer { redis.stop() }
        let metrics = WorkerMetrics()
        let server = try await Self.server(redis, metrics: metrics)
        let stuck = try await Self.server(redis, live: 0)
        let (port, stuckPort) = (server.port, stuck.port)
        try await onOwnThread {
            let c = try RawConnection(port: port)
            c.send("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
            let m = try #require(c.response())
            #expect(m.status == 200 && m.body == metrics.render() && m.headers["content-type"] == "text/plain; version=0.0.4")
            c.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(c.response()?.body == "ok\n")
            c.send("GET /nothing HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(c.response()?.status == 404)
            let s = try RawConnection(port: stuckPort)
            s.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(s.response()?.status == 503)
        }
        await server.stop()
        await stuck.stop()
    }

    @Test("/healthz answers 503 while every thread of the cooperative pool is blocked: the server's tasks have a thread of their own")
    func answersWithThePoolBlocked() async throws {
        // In a process of its own (this test binary, running only the test below): blocking
        // every pool thread here would stall every other test running beside this one.
        let binary = try #require(TestFiles.executablePath(), "no /proc/self/exe")
        var environment = ProcessInfo.processInfo.environment
        environment[Self.poolChildVariable] = "1"
        let environmentForChild = environment
        let (termination, output) = try await onOwnThread {
            ChildProcess.run(binary, ["--testing-library", "swift-testing", "--filter", "healthzWithThePoolBlocked"],
                             environment: environmentForChild, mergeErrors: true, seconds: 120)
        }
        #expect(termination == .exited(0), "the child run: \(output.suffix(3000))")
        #expect(output.contains("Test run with 1 test"), "the child ran no test: \(output.suffix(3000))")
    }

    /// Set in the environment of the process `answersWithThePoolBlocked` starts.
    static let poolChildVariable = "SWIFTPUSH_TEST_POOL_BLOCKED_CHILD"

    @Test("(run by answersWithThePoolBlocked in a process of its own) /healthz answers 503 with every pool thread blocked",
          .enabled(if: ProcessInfo.processInfo.environment[poolChildVariable] == "1"))
    func healthzWithThePoolBlocked() async throws {
        let redis = try await onOwnThread { try RedisServerProcess() }
        defer { redis.stop() }
        let stuck = try await Self.server(redis, live: 0)
        let port = stuck.port
        try await onOwnThread {
            // The pool has one thread per core: that many tasks that hold their threads until
            // released block it all (this thread is not one of them).
            let pool = PoolBlocker(threads: ProcessInfo.processInfo.activeProcessorCount)
            defer { pool.release() }
            try #require(pool.waitUntilBlocked(seconds: 60), "the pool's threads were never all held")
            let s = try RawConnection(port: port)
            s.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(s.response()?.status == 503)
            // Without this the test could pass with a pool that had a thread to spare.
            #expect(!pool.probeRan, "a task ran on the pool meanwhile: it was not blocked")
        }
        await stuck.stop()
    }

    @Test("A request split over two TCP segments is answered once it is whole, not before")
    func splitRequest() async throws {
        let redis = try await onOwnThread { try RedisServerProcess() }
        defer { redis.stop() }
        let server = try await Self.server(redis)
        let port = server.port
        try await onOwnThread {
            let c = try RawConnection(port: port)
            c.send("GET /heal")
            // Nothing may come back for half a request (the old responder answered 404 at once).
            #expect(!c.hasData(withinMillis: 300))
            c.send("thz HTTP/1.1\r\nHost: x\r\n\r\n")
            let r = try #require(c.response())
            #expect(r.status == 200 && r.body == "ok\n")
        }
        await server.stop()
    }

    @Test("Keep-alive: several requests on one connection, pipelined ones answered in order")
    func keepAlive() async throws {
        let redis = try await onOwnThread { try RedisServerProcess() }
        defer { redis.stop() }
        let server = try await Self.server(redis)
        let port = server.port
        try await onOwnThread {
            let c = try RawConnection(port: port)
            for _ in 0..<3 {
                c.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
                #expect(c.response()?.body == "ok\n")
            }
            c.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nGET /nothing HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(c.response()?.status == 200)
            #expect(c.response()?.status == 404)
            #expect(!c.closedByPeer(withinMillis: 200))
        }
        await server.stop()
    }

    @Test("/status.json is the fleet's view; an unknown campaign or shard says it is unknown and names the known ones, not an error")
    func statusJSON() async throws {
        let redis = try await onOwnThread { try RedisServerProcess() }
        defer { redis.stop() }
        try await onOwnThread { try StatusReaderTests.seed(redis) }
        let server = try await Self.server(redis)
        let port = server.port
        try await onOwnThread {
            let c = try RawConnection(port: port)
            func get(_ path: String) throws -> [String: Any] {
                c.send("GET \(path) HTTP/1.1\r\nHost: x\r\n\r\n")
                let r = try #require(c.response())
                #expect(r.status == 200 && r.headers["content-type"] == "application/json")
                return try #require(try JSONSerialization.jsonObject(with: Data(r.body.utf8)) as? [String: Any])
            }
            let all = try get("/status.json")
            let shards = try #require(all["shards"] as? [[String: Any]])
            #expect(shards.map { $0["shard"] as? String } == ["0", "1"] && shards[0]["pending_entries"] as? Int == 8 && shards[0]["waiting_entries"] as? Int == 12)
            #expect((all["this_worker"] as? [String: Any])?["consumer"] as? String == "me" && all["error"] is NSNull)
            let campaign = try get("/status.json?campaign=nope")
            #expect(campaign["campaign"] as? String == "nope" && campaign["error"] is NSNull)
            let fleet = try #require(campaign["fleet"] as? [String: Any])
            #expect(fleet["state"] as? String == "unknown" && (fleet["progress"] as? [String: Any])?["done_notifications"] is NSNull)
            #expect((campaign["notes"] as? [String])?.contains("campaign nope unknown: no shard shown counts it; known campaigns: spring") == true)
            let shard = try get("/status.json?shards=zz")
            let zz = try #require((shard["shards"] as? [[String: Any]])?.first)
            #expect(zz["known"] as? Bool == false && zz["state"] as? String == "unknown" && shard["error"] is NSNull)
            #expect((shard["notes"] as? [String])?.contains("shard zz unknown: no key of it in Redis; known shards: 0, 1") == true)
        }
        await server.stop()
    }

    @Test("/events sends the view as server-sent events, one per read, while the client stays")
    func events() async throws {
        let redis = try await onOwnThread { try RedisServerProcess() }
        defer { redis.stop() }
        try await onOwnThread { try StatusReaderTests.seed(redis) }
        let server = try await Self.server(redis)
        let port = server.port
        try await onOwnThread {
            let c = try RawConnection(port: port)
            c.send("GET /events?campaign=spring HTTP/1.1\r\nHost: x\r\n\r\n")
            let head = try #require(c.read(through: "\r\n\r\n"))
            #expect(head.hasPrefix("HTTP/1.1 200") && head.lowercased().contains("content-type: text/event-stream"))
            var times: [Int] = []
            for _ in 0..<2 {
                // The body is chunked: each event's "data: {...}" line ends with a blank line.
                let event = try #require(c.read(through: "\n\n"))
                let json = try #require(event.range(of: "data: ").map { String(event[$0.upperBound...]).trimmingCharacters(in: .whitespacesAndNewlines) })
                let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
                #expect(object["campaign"] as? String == "spring")
                times.append(object["time_ms"] as? Int ?? 0)
            }
            #expect(times[1] > times[0])
        }
        await server.stop()
    }

    @Test("The page is one self-contained document: no source outside it, and a policy that forbids one")
    func page() async throws {
        let redis = try await onOwnThread { try RedisServerProcess() }
        defer { redis.stop() }
        let server = try await Self.server(redis)
        let port = server.port
        try await onOwnThread {
            let c = try RawConnection(port: port)
            c.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            let r = try #require(c.response())
            #expect(r.status == 200 && r.headers["content-type"] == "text/html; charset=utf-8")
            #expect(r.headers["content-security-policy"]?.hasPrefix("default-src 'none'") == true)
            #expect(r.body.hasPrefix("<!doctype html>") && r.body.contains("/status.json") && r.body.contains("/events"))
            for external in ["src=", "<link rel=\"stylesheet\"", "@import", "url(", "https://", "innerHTML"] {
                #expect(!r.body.contains(external), "the page holds \(external)")
            }
        }
        await server.stop()
    }
}
