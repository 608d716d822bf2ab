import Foundation
import Testing
import SwiftPushRedis
import TestProcessSupport
@testable import SwiftPushWorker
@testable import SwiftPushWorkerMachine
@testable import SwiftPushWorkerRedis
import SwiftPushKeys

/// The driver reads every time it uses from the clock it is given (`WorkerClock`, issue 34):
/// a worker on a clock whose wall time is fixed far from now writes that time, not the real one,
/// into its heartbeat, against a real redis-server. Skipped without redis-server.
@Suite("WorkerDriver's clock", .timeLimit(.minutes(2)))
struct WorkerClockTests {
    /// 2030-01-01T00:00:00Z, in UNIX milliseconds: far from any real now of these tests.
    static let fixedWallMillis: Int64 = 1_893_456_000_000

    @Test("The heartbeat's started_ms and heartbeat_ms come from the injected clock")
    func heartbeatFromInjectedClock() async throws {
        // Blocking work (the driver's loop, waiting on Redis) on threads of its own, not the
        // cooperative pool's few.
        try await onOwnThread { try Self.heartbeatFromInjectedClockBlocking() }
    }

    static func heartbeatFromInjectedClockBlocking() throws {
        guard let server = WorkQueueContractTests.Server() else { return }
        let redis = try server.connect()
        let key = WorkerConfigurationTests.pki + "/AuthKey_TESTKEY001.p8"
        let config = try WorkerConfiguration.parse(json: Array(#"""
            {"redis": {"host": "127.0.0.1", "port": \#(server.port)}, "shard": "clock",
             "apps": {"demo": {"key_file": "\#(key)", "key_id": "TESTKEY001", "team_id": "TEAM123456",
                               "host": "localhost", "port": 1}}}
            """#.utf8))
        let keys = StreamKeys(shard: "clock")
        // The heartbeat's HSET is the only sign the worker gives: waited for as a keyspace
        // notification on its key (a blocking read, up to the connection's 15 s command timeout),
        // subscribed before the worker starts so that it cannot be missed.
        _ = try redis.command("CONFIG", "SET", "notify-keyspace-events", "Kh")
        let events = try server.connect()
        try events.send(RedisArguments(["SUBSCRIBE", "__keyspace@0__:" + keys.workers]))
        _ = try events.receive()  // the subscription's confirmation
        let connector = try RedisConnector(config.redis)
        let fixed = Self.fixedWallMillis
        // Monotonic time stays real (the driver's waits are real); the wall clock is fixed.
        let driver = try WorkerDriver(configuration: config, connector: connector, consumer: "w-clock", log: WorkerLog(verbose: false),
                                      clock: { WorkerTime(nanos: WorkerTime.system().nanos, wallMillis: fixed) })
        let ended = DispatchSemaphore(value: 0)
        // The driver is not Sendable: it runs on one thread, this one only asks it to stop
        // (`requestStop`, which writes to its pipe and is safe from any thread).
        nonisolated(unsafe) let running = driver
        Thread.detachNewThread {
            _ = running.run()
            ended.signal()
        }
        defer {
            driver.requestStop()
            _ = ended.wait(timeout: .now() + 30)
        }
        let event = try events.receive().elements.compactMap(\.text)
        #expect(event.last == "hset", "\(event)")
        let heartbeat = try redis.command("HGET", keys.workers, "w-clock").text.flatMap { Heartbeat(field: "w-clock", json: $0) }
        let h = try #require(heartbeat, "no heartbeat from the worker")
        #expect(h.heartbeatMillis == Int(fixed) && h.startedMillis == Int(fixed), "\(h)")
    }

    /// A monotonic clock the test moves by hand.
    final class HandClock: @unchecked Sendable {
        private let lock = NSLock()
        private var nanos: UInt64 = 5_000_000_000
        func read() -> UInt64 { lock.withLock { nanos } }
        func advance(millis: UInt64) { lock.withLock { nanos += millis * 1_000_000 } }
    }

    @Test("The loop's liveness (/healthz) is measured on the injected clock: an hour of its time without a publish is not live, whatever the real clocks say")
    func livenessOnInjectedClock() throws {
        let key = WorkerConfigurationTests.pki + "/AuthKey_TESTKEY001.p8"
        let config = try WorkerConfiguration.parse(json: Array(#"""
            {"redis": {"host": "127.0.0.1", "port": 1}, "shard": "clock",
             "apps": {"demo": {"key_file": "\#(key)", "key_id": "TESTKEY001", "team_id": "TEAM123456",
                               "host": "localhost", "port": 1}}}
            """#.utf8))
        let hand = HandClock()
        let fixed = Self.fixedWallMillis
        // Not run: liveness counts from when the metrics were made, on the driver's clock.
        let driver = try WorkerDriver(configuration: config, connector: try RedisConnector(config.redis), consumer: "w-live",
                                      log: WorkerLog(verbose: false), clock: { WorkerTime(nanos: hand.read(), wallMillis: fixed) })
        #expect(driver.metrics.isLive(withinMillis: 10_000))
        hand.advance(millis: 3_600_000)
        #expect(!driver.metrics.isLive(withinMillis: 10_000), "liveness read another clock than the driver's")
    }

    /// Lines a log wrote, kept in memory.
    final class Lines: @unchecked Sendable {
        private let lock = NSLock()
        private var lines: [String] = []
        func append(_ line: String) { lock.withLock { lines.append(line) } }
        var all: [String] { lock.withLock { lines } }
    }

    @Test("The log's lines carry the injected clock's time, not the real one")
    func logOnInjectedClock() throws {
        let key = WorkerConfigurationTests.pki + "/AuthKey_TESTKEY001.p8"
        // No Redis on port 1: the driver stops at once, having taken nothing.
        let config = try WorkerConfiguration.parse(json: Array(#"""
            {"redis": {"host": "127.0.0.1", "port": 1}, "shard": "clock", "drain_ms": 0,
             "apps": {"demo": {"key_file": "\#(key)", "key_id": "TESTKEY001", "team_id": "TEAM123456",
                               "host": "localhost", "port": 1}}}
            """#.utf8))
        let lines = Lines()
        let fixed = Self.fixedWallMillis + 123
        let driver = try WorkerDriver(configuration: config, connector: try RedisConnector(config.redis), consumer: "w-log",
                                      log: WorkerLog(verbose: true, output: { lines.append($0) }),
                                      clock: { WorkerTime(nanos: WorkerTime.system().nanos, wallMillis: fixed) })
        driver.requestStop()
        _ = driver.run()
        let written = lines.all
        #expect(written.contains { $0.contains("msg=stopped") }, "\(written)")
        #expect(written.allSatisfy { $0.hasPrefix("ts=2030-01-01T00:00:00.123Z ") }, "\(written)")
    }
}
