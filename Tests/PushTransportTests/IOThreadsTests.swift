import Foundation
import Synchronization
import Testing
import CSwiftPushABI
import PushCore
@testable import APNsMock
@testable import PushClientCore

/// A client with several I/O threads (PushClientGroup), against the mock: the same promises as
/// one thread (every notification one outcome, nothing twice), with the work spread over the
/// threads, one provider token shared, one place to poll, a callback called by one thread at a
/// time, and a close that cancels what is left everywhere.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct IOThreadsTests {
    let support = ClientTestSupport()

    @Test("100,000 notifications over 4 I/O threads × 2 connections: each accepted once, every thread carried some")
    func manyOverFourThreads() throws {
        let server = try support.startMock { $0.recordRequests = true }
        defer { server.stop() }
        let group = try support.makeGroup(port: server.port, ioThreads: 4, connections: 8) { $0.pool.queueCapacity = 20_000 }
        defer { group.close(drainMillis: 0) }
        #expect(group.shards.count == 4)
        #expect(group.shards.allSatisfy { $0.configuration.pool.connections == 2 && $0.slots.capacity == 5000 })
        let results = support.sendAll(group, count: 100_000)
        #expect(results.count == 100_000)
        #expect(Set(results.map(\.tag)).count == 100_000, "no tag twice")
        #expect(results.allSatisfy { $0.outcome == 1 })
        var processed: [String: Int] = [:]
        for r in server.record() where r.status == 200 { processed[r.apnsId, default: 0] += 1 }
        #expect(processed.count == 100_000 && processed.values.allSatisfy { $0 == 1 }, "the mock answered each once")
        #expect(group.shards.allSatisfy { $0.stats().accepted > 0 }, "every I/O thread carried some")
        let stats = group.stats()
        #expect(stats.accepted == 100_000 && stats.sent >= 100_000 && stats.unpolled == 0)
        #expect(stats.connections_open == 8 && stats.connection_count == 8)
        #expect(stats.latency_p50_us > 0 && stats.latency_p99_us >= stats.latency_p50_us)
        #expect(server.stats().connections == 8)
        let tokens = Set(group.shards.map { ObjectIdentifier($0.token!) })
        #expect(tokens.count == 1, "one provider token (JWT) shared by every thread")
    }

    @Test("poll waits on every thread at once, and says when all is delivered after close")
    func pollWaitsAcrossThreads() throws {
        let server = try support.startMock()
        defer { server.stop() }
        let group = try support.makeGroup(port: server.port, ioThreads: 3, connections: 3)
        #expect(group.waitUntilConnected(timeoutMillis: 5000) == nil)
        var page = [push_result](repeating: push_result(), count: 10)
        for round in 0..<6 { // sends rotate, so the result turns up in each thread in turn
            #expect(support.send(group, count: 1, firstTag: round).accepted == 1)
            let started = MonotonicTime.nanos()
            let got = page.withUnsafeMutableBytes {
                group.poll(into: $0.baseAddress!, max: 10, recordSize: MemoryLayout<push_result>.stride, timeoutMillis: 5000)
            }
            #expect(got.count == 1 && page[0].tag == UInt64(round) && page[0].outcome == 1)
            #expect(MonotonicTime.nanos() - started < 4_000_000_000, "woken by the result, not by the timeout")
        }
        let empty = page.withUnsafeMutableBytes {
            group.poll(into: $0.baseAddress!, max: 10, recordSize: MemoryLayout<push_result>.stride, timeoutMillis: 100)
        }
        #expect(empty.count == 0 && !empty.allDelivered)
        group.close(drainMillis: 1000)
        let after = page.withUnsafeMutableBytes {
            group.poll(into: $0.baseAddress!, max: 10, recordSize: MemoryLayout<push_result>.stride, timeoutMillis: -1)
        }
        #expect(after.count == 0 && after.allDelivered, "all delivered, without waiting forever")
        #expect(support.send(group, count: 1).error?.status == .closed)
    }

    @Test("A result callback is called by one thread at a time, once per result")
    func callbackIsSerialized() throws {
        final class Seen: @unchecked Sendable {
            let inside = Atomic<Int>(0)
            let overlaps = Atomic<Int>(0)
            let results = Atomic<Int>(0)
            let lock = NSLock()
            var tags = Set<UInt64>()
            var threads = Set<UInt>()
        }
        let seen = Seen()
        let server = try support.startMock()
        defer { server.stop() }
        let group = try support.makeGroup(port: server.port, ioThreads: 4, connections: 4) {
            $0.callbacks.result = ResultCallback(function: { context, results, count in
                let seen = Unmanaged<Seen>.fromOpaque(context!).takeUnretainedValue()
                if seen.inside.wrappingAdd(1, ordering: .sequentiallyConsistent).oldValue != 0 {
                    seen.overlaps.wrappingAdd(1, ordering: .relaxed)
                }
                usleep(200) // widen the window in which another thread could enter
                seen.lock.lock()
                for i in 0..<count { seen.tags.insert(results![i].tag) }
                seen.threads.insert(UInt(pthread_self()))
                seen.lock.unlock()
                seen.results.wrappingAdd(count, ordering: .relaxed)
                seen.inside.wrappingSubtract(1, ordering: .sequentiallyConsistent)
            }, userData: Unmanaged.passUnretained(seen).toOpaque())
        }
        var sent = 0
        while sent < 20_000 { sent += support.send(group, count: 500, firstTag: sent, timeoutMillis: 5000).accepted }
        group.close(drainMillis: 10_000)
        #expect(seen.results.load(ordering: .relaxed) == 20_000)
        #expect(seen.tags.count == 20_000)
        #expect(seen.overlaps.load(ordering: .relaxed) == 0, "never two threads in the callback at once")
        #expect(seen.threads.count > 1, "the threads took turns")
    }

    @Test("Close with work in flight on every thread: each notification ends once, the rest cancelled")
    func closeWithWorkInFlight() throws {
        let server = try support.startMock { $0.faults.responseDelayMillis = 50 }
        defer { server.stop() }
        let group = try support.makeGroup(port: server.port, ioThreads: 3, connections: 3)
        var sent = 0
        while sent < 3000 { sent += support.send(group, count: 500, firstTag: sent, timeoutMillis: 5000).accepted }
        group.close(drainMillis: 0)
        let results = support.collect(group, count: 3001, idleMillis: 2000)
        #expect(results.count == 3000 && Set(results.map(\.tag)).count == 3000)
        let cancelled = results.filter { $0.outcome == 3 }
        #expect(!cancelled.isEmpty)
        #expect(cancelled.allSatisfy {
            $0.reason == APNsReason.cancelled.rawValue || $0.reason == APNsReason.cancelledInFlight.rawValue
        })
    }

    @Test("Back-pressure: the queue capacity is shared out, and a full group says so")
    func backPressureAcrossThreads() throws {
        let server = try support.startMock()
        defer { server.stop() }
        let group = try support.makeGroup(port: server.port, ioThreads: 4, connections: 4) { $0.pool.queueCapacity = 64 }
        defer { group.close(drainMillis: 0) }
        let r = support.send(group, count: 1000, timeoutMillis: 0)
        #expect(r.accepted == 64, "4 threads × 16 slots, none freed without a poll")
        #expect(r.error?.status == .queueFull)
        #expect(r.error?.description.contains("4 I/O threads") == true)
        let started = MonotonicTime.nanos()
        let waited = support.send(group, count: 1, timeoutMillis: 200)
        #expect(waited.accepted == 0 && waited.error?.status == .queueFull)
        #expect(MonotonicTime.nanos() - started >= 190_000_000, "a blocking send waits its timeout")
        let results = support.collect(group, count: 64)
        #expect(results.count == 64 && results.allSatisfy { $0.outcome == 1 })
        #expect(support.send(group, count: 64, firstTag: 1000, timeoutMillis: 0).accepted == 64, "room again once polled")
    }

    @Test("waitUntilConnected waits for every thread, and reports a server that is not there")
    func waitUntilConnectedCoversEveryThread() throws {
        let server = try support.startMock()
        defer { server.stop() }
        let group = try support.makeGroup(port: server.port, ioThreads: 3, connections: 3)
        defer { group.close(drainMillis: 0) }
        #expect(group.waitUntilConnected(timeoutMillis: 5000) == nil)
        // Each thread's stats show its connection once it is ready.
        #expect(waitUntil(seconds: 5) { group.stats().connections_open == 3 }, "\(group.stats().connections_open) open")

        let nobody = try support.makeGroup(port: 1, ioThreads: 2, connections: 2) // nothing listens on port 1
        defer { nobody.close(drainMillis: 0) }
        let error = nobody.waitUntilConnected(timeoutMillis: 300)
        #expect(error?.status == .timeout)
    }
}
