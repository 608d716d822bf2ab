import Foundation
import Synchronization
import Testing
import TestProcessSupport
@testable import APNsMock
@testable import SwiftPushKit

/// The Swift API's waits hold no thread of their own (issue 33, item 4): however many tasks
/// wait at once for a connection, a channel call or the shutdown, the client's threads stay a
/// small constant number, where a thread per call adds one per waiting task. Counted in
/// /proc/self/task while the calls wait: the test waits until either the count has grown by
/// `limit` (a thread per call: it fails) or every call has returned (it passes). The limit
/// leaves room for the threads of the suite's other tests, which run meanwhile (up to 111 more
/// were seen beside two other targets' tests); the calls outnumber it, so a thread per call exceeds it.
@Suite("Swift API threads", .timeLimit(.minutes(5)))
struct ThreadTests {
    /// A count that tasks add to.
    final class Count: Sendable {
        private let value = Atomic<Int>(0)
        func add() { value.add(1, ordering: .relaxed) }
        var now: Int { value.load(ordering: .relaxed) }
    }

    /// Threads of this process now.
    static func threadCount() -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count) ?? 0
    }

    /// Starts `calls` copies of `call` at once and waits until they have all returned or the
    /// process has `limit` threads more than before; returns the most threads more seen.
    static func peakThreads(calls: Int, limit: Int, _ call: @escaping @Sendable () async -> Void) async -> Int {
        let before = threadCount()
        let returned = Count()
        let runner = Task {
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<calls {
                    group.addTask {
                        await call()
                        returned.add()
                    }
                }
            }
        }
        var peak = 0
        await waitUntil(seconds: 120) {
            peak = max(peak, threadCount() - before)
            return peak >= limit || returned.now == calls
        }
        await runner.value
        return peak
    }

    @Test("500 tasks waiting at once in waitUntilConnected (nothing listens) hold no thread each")
    func connectionWaits() async throws {
        let port = try #require(LoopbackPort.unused())
        var c = KitTestSupport.configuration(port: port)
        c.environment = .custom(host: "127.0.0.1", port: port)
        let client = try APNsClient(configuration: c, logger: KitTestSupport.quiet)
        let failed = Count()
        let start = ContinuousClock.now
        let peak = await Self.peakThreads(calls: 500, limit: 250) {
            do {
                try await client.waitUntilConnected(timeout: .seconds(2))
            } catch {
                failed.add()
            }
        }
        let took = ContinuousClock.now - start
        print("500 waitUntilConnected: at most \(peak) threads more, \(took)")
        #expect(peak < 250, "\(peak) threads more while 500 tasks waited")
        #expect(failed.now == 500, "nothing listens: each times out")
        // One after another would take 500 × 2 s; beside other tests on a busy machine it took 26 s.
        #expect(took < .seconds(120), "each answered at its own timeout (2 s), not one after another: \(took)")
        await client.shutdown(drain: .zero)
    }

    @Test("300 channel calls at once take turns on one thread; 300 shutdowns at once start none")
    func channelCallsAndShutdowns() async throws {
        let server = try KitTestSupport.startMock {
            $0.channelManagementPort = 0
            $0.faults.stallTokens = [CancellationTests.stalled]
        }
        defer { server.stop() }
        let client = try KitTestSupport.client(for: server) {
            $0.channelManagement = .custom(host: "localhost", port: server.channelManagementPort)
        }
        _ = try await client.listChannels() // the management connection is open
        let listed = Count()
        let peak = await Self.peakThreads(calls: 300, limit: 150) {
            if (try? await client.listChannels()) != nil { listed.add() }
        }
        print("300 channel calls: at most \(peak) threads more")
        #expect(peak < 150, "\(peak) threads more while 300 channel calls waited their turn")
        #expect(listed.now == 300)

        // A notification the mock never answers: each shutdown waits for its drain to end.
        let stalled = PushNotification(deviceToken: CancellationTests.stalled, payload: KitTestSupport.payload)
        let note = Task { try await client.send(stalled) }
        #expect(await waitUntil(seconds: 60) { server.stats().stalledRequests == 1 })
        let closing = await Self.peakThreads(calls: 300, limit: 150) { await client.shutdown(drain: .seconds(1)) }
        print("300 shutdowns: at most \(closing) threads more")
        #expect(closing < 150, "\(closing) threads more while 300 shutdowns waited")
        let r = try await note.value
        #expect(r.outcome == .failed && client.stats().failed == 1, "ended by the shutdown, once: \(r)")
    }

    @Test("A call thread stopped while idle has ended, its thread-local state freed, when stop returns")
    func callThreadEndsAtStop() async {
        // A thread-local value whose destructor runs as the thread ends, as OpenSSL's per-thread
        // state is freed: a call thread still ending after stop returned freed it beside the
        // process's exit (and OpenSSL's clean-up at exit), which crashed `swiftpush channels`.
        var key = pthread_key_t()
        #expect(pthread_key_create(&key, { _ in callThreadLocalsFreed.store(true, ordering: .sequentiallyConsistent) }) == 0)
        defer { pthread_key_delete(key) }
        callThreadLocalsFreed.store(false, ordering: .sequentiallyConsistent)
        let calls = CallThread()
        let k = key
        let set = await calls.run { pthread_setspecific(k, UnsafeRawPointer(bitPattern: 1)) == 0 }
        #expect(set == true)
        calls.stop()
        let freed = callThreadLocalsFreed.load(ordering: .sequentiallyConsistent)
        #expect(freed, "the thread's locals are freed before stop returns")
    }
}

/// Set by `callThreadEndsAtStop`'s thread-local destructor (a C function: it captures nothing).
let callThreadLocalsFreed = Atomic<Bool>(false)
