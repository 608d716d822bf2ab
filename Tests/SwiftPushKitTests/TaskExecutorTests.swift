import Foundation
import Synchronization
import Testing
import TestProcessSupport
@testable import APNsMock
@testable import SwiftPushKit

/// The client's task executor (`APNsClient.taskExecutor`, issue 33 item 4), against the mock
/// over real TLS and HTTP/2: tasks that prefer it run on its one thread and get every result,
/// once; cancellation and deadlines end their sends as they do elsewhere; `shutdown` ends the
/// thread, and neither the client nor its shutdown waits for a task that blocks the thread.
@Suite("The client's task executor", .timeLimit(.minutes(5)))
struct TaskExecutorTests {
    /// A count that tasks add to.
    final class Count: Sendable {
        private let value = Atomic<Int>(0)
        func add() { value.add(1, ordering: .relaxed) }
        var now: Int { value.load(ordering: .relaxed) }
    }

    @Test("1,000 sends from 100 tasks on the client's executor: each has its one result, and each task resumes on the executor's thread")
    func sendsOnTheExecutor() async throws {
        let server = try KitTestSupport.startMock()
        defer { server.stop() }
        let client = try KitTestSupport.client(for: server)
        let accepted = Count(), elsewhere = Count()
        await withTaskExecutorPreference(client.taskExecutor) {
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<100 {
                    group.addTask {
                        for _ in 0..<10 {
                            let r = try? await client.send(PushNotification(deviceToken: KitTestSupport.token, payload: KitTestSupport.payload))
                            if r?.outcome == .accepted { accepted.add() }
                            if !client.taskExecutor.isCurrent { elsewhere.add() }
                        }
                    }
                }
            }
        }
        #expect(accepted.now == 1000)
        #expect(elsewhere.now == 0, "\(elsewhere.now) sends resumed off the executor's thread")
        await client.shutdown()
        let s = client.stats()
        #expect(s.accepted == 1000 && s.failed == 0 && s.rejected == 0, "each once: \(s)")
        #expect(server.stats().accepted == 1000)
    }

    @Test("A cancelled send on the executor ends at once with CancellationError; a per-call deadline ends one Timeout")
    func cancellationAndDeadline() async throws {
        let server = try KitTestSupport.startMock { $0.faults.stallTokens = [CancellationTests.stalled] }
        defer { server.stop() }
        let client = try KitTestSupport.client(for: server)
        // A first, accepted one raises the mock's stream limit above 1.
        #expect(try await client.send(PushNotification(deviceToken: KitTestSupport.token, payload: KitTestSupport.payload)).outcome == .accepted)
        let endedAt = Mutex<ContinuousClock.Instant?>(nil)
        let task = Task(executorPreference: client.taskExecutor) {
            defer { endedAt.withLock { $0 = .now } }
            return try await client.send(CancellationTests.stalledNote())
        }
        #expect(await waitUntil(seconds: 60) { server.stats().stalledRequests == 1 })
        let cancelled = ContinuousClock.now
        task.cancel()
        let result = await task.result
        let took = (endedAt.withLock { $0 } ?? .now) - cancelled
        print("cancel of a send on the client's executor: \(took)")
        #expect(CancellationTests.isCancellation(result), "\(result)")
        #expect(took < .seconds(10), "took \(took) (the deadline is 60 s; quiet, it takes under 2 ms)")

        let started = ContinuousClock.now
        let timedOut = try await Task(executorPreference: client.taskExecutor) {
            try await client.send(CancellationTests.stalledNote(), deadline: .milliseconds(200))
        }.value
        let tookDeadline = ContinuousClock.now - started
        #expect(timedOut.outcome == .failed && timedOut.reason == .timeout, "\(timedOut)")
        #expect(tookDeadline >= .milliseconds(200) && tookDeadline < .seconds(10), "took \(tookDeadline)")
        await client.shutdown(drain: .zero)
        let s = client.stats()
        #expect(s.failed == 2 && s.accepted == 1, "each once (the cancelled one at shutdown): \(s)")
    }

    @Test("A task that blocks the executor's thread holds up neither sends from elsewhere nor shutdown; shutdown ends the thread, and tasks that prefer it then run on the pool")
    func blockedThreadAndShutdown() async throws {
        let server = try KitTestSupport.startMock()
        defer { server.stop() }
        let client = try KitTestSupport.client(for: server)
        let executor = client.taskExecutor
        let note = PushNotification(deviceToken: KitTestSupport.token, payload: KitTestSupport.payload)
        await Task(executorPreference: executor) {}.value // the thread runs
        #expect(executor.ended.load(ordering: .acquiring) == false)
        // A send on the executor and a task that blocks its thread (a blocking call of the
        // user's), taken as one batch: the send's flush waits for the thread's turn.
        let gate = DispatchSemaphore(value: 0)
        let blocking = Count()
        var sender: Task<PushResult, any Error>?
        var blocker: Task<Bool, Never>?
        executor.holdingWakes {
            sender = Task(executorPreference: executor) { try await client.send(note) }
            blocker = Task(executorPreference: executor) {
                blocking.add()
                gate.wait()
                await Task.yield() // resumed after shutdown: on the pool
                return executor.isCurrent
            }
        }
        #expect(await waitUntil(seconds: 60) { blocking.now == 1 })
        // Sends from elsewhere go on (a flush shared with the blocked thread's would wait for it).
        let elsewhere = Task { try await client.send(note) }
        let answered = Count()
        Task { if (try? await elsewhere.value)?.outcome == .accepted { answered.add() } }
        #expect(await waitUntil(seconds: 60) { answered.now == 1 }, "a send off the executor waited for its blocked thread")
        // So does the shutdown, while the thread is held.
        await client.shutdown()
        #expect(executor.ended.load(ordering: .acquiring) == false, "still running the blocked task")
        gate.signal()
        #expect(await waitUntil(seconds: 60) { executor.ended.load(ordering: .acquiring) }, "the thread ended after its batch")
        #expect(await blocker?.value == false, "resumed on the pool, not on an ended thread")
        #expect(try await sender?.value.outcome == .accepted, "the executor's send has its one result")
        let after = await Task(executorPreference: executor) { 42 }.value
        #expect(after == 42, "a task that prefers the stopped executor still runs")
        let s = client.stats()
        #expect(s.accepted == 2 && s.failed == 0, "each once: \(s)")
    }
}
