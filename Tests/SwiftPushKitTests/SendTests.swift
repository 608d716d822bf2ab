import Testing
@testable import APNsMock
@testable import SwiftPushKit

/// Sending through the async API against the mock: one notification, batches with their
/// results as they come, many tasks at once, back-pressure.
@Suite("Sending", .timeLimit(.minutes(5)))
struct SendTests {
    @Test("One send returns the notification's accepted result with its apns-id, status, attempts and latency")
    func oneSend() async throws {
        let server = try KitTestSupport.startMock()
        defer { server.stop() }
        let client = try KitTestSupport.client(for: server)
        let id = APNsID.random()
        var note = PushNotification(deviceToken: KitTestSupport.token, payload: KitTestSupport.payload)
        note.apnsID = id
        let result = try await client.send(note)
        #expect(result.outcome == .accepted)
        #expect(result.status == 200 && result.reason == nil && result.detail.isEmpty)
        #expect(result.apnsID == id)
        #expect(result.attempts == 1 && result.latency > .zero && result.timestamp == nil)
        await client.shutdown()
        let record = server.record()
        #expect(record.count == 1 && record.first?.apnsId == id.description, "\(record)")
    }
}

extension SendTests {
    @Test("A batch yields one element per notification as the results come, each sent exactly once; the payload's bytes are shared, not copied")
    func batchResultsAsTheyCome() async throws {
        let server = try KitTestSupport.startMock()
        defer { server.stop() }
        let client = try KitTestSupport.client(for: server)
        let notes = KitTestSupport.notifications(5000)
        // Multicast: every notification holds the same payload storage.
        let bases = Set(notes.prefix(100).map { $0.payload.bytes.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) } })
        #expect(bases.count == 1)
        let results = client.send(contentsOf: notes)
        #expect(results.count == 5000)
        var seen = Set<Int>()
        var accepted = 0
        for await r in results {
            #expect(seen.insert(r.index).inserted, "index \(r.index) twice")
            if r.value?.outcome == .accepted { accepted += 1 }
        }
        #expect(seen == Set(0..<5000) && accepted == 5000)
        await client.shutdown()
        let ids = server.record().map(\.apnsId)
        #expect(ids.count == 5000 && Set(ids).count == 5000, "the mock processed \(ids.count) requests, \(Set(ids).count) distinct")
    }

    @Test("A batch with invalid notifications refuses each at its index with the rule it broke and sends the rest")
    func batchWithInvalidNotifications() async throws {
        let server = try KitTestSupport.startMock()
        defer { server.stop() }
        let client = try KitTestSupport.client(for: server)
        var notes = KitTestSupport.notifications(10)
        notes[3] = PushNotification(deviceToken: "abc", payload: KitTestSupport.payload)
        notes[7] = PushNotification(deviceToken: KitTestSupport.token, payload: PushPayload(json: "not json"))
        let all = await KitTestSupport.collect(client.send(contentsOf: notes))
        #expect(all.count == 10)
        let byIndex = Dictionary(uniqueKeysWithValues: all.map { ($0.index, $0) })
        #expect(byIndex[3]?.error?.code == .badDeviceToken, "\(String(describing: byIndex[3]?.error))")
        #expect(byIndex[3]?.error?.message.contains("odd number of hex digits") == true)
        #expect(byIndex[7]?.error?.code == .badPayload)
        #expect(all.filter { $0.value?.outcome == .accepted }.count == 8)
        await client.shutdown()
        #expect(server.record().count == 8)
    }

    @Test("1,000 tasks sending one notification each all get their own result")
    func thousandConcurrentSends() async throws {
        let server = try KitTestSupport.startMock()
        defer { server.stop() }
        let client = try KitTestSupport.client(for: server)
        let ids = try await withThrowingTaskGroup(of: (APNsID, PushResult).self) { group in
            for _ in 0..<1000 {
                group.addTask {
                    let id = APNsID.random()
                    var note = PushNotification(deviceToken: KitTestSupport.token, payload: KitTestSupport.payload)
                    note.apnsID = id
                    return (id, try await client.send(note))
                }
            }
            var pairs: [(APNsID, PushResult)] = []
            for try await pair in group { pairs.append(pair) }
            return pairs
        }
        #expect(ids.count == 1000)
        #expect(ids.allSatisfy { $0.0 == $0.1.apnsID && $0.1.outcome == .accepted })
        await client.shutdown()
    }

    @Test("With every slot in use, sends wait (suspended) for room and all go through, in batches and one by one")
    func backPressure() async throws {
        let server = try KitTestSupport.startMock { $0.faults.responseDelayMillis = 20 }
        defer { server.stop() }
        let client = try KitTestSupport.client(for: server) { $0.pool.queueCapacity = 16 }
        async let batch = KitTestSupport.collect(client.send(contentsOf: KitTestSupport.notifications(600)))
        let singles = try await withThrowingTaskGroup(of: PushOutcome.self) { group in
            for _ in 0..<100 {
                group.addTask { try await client.send(PushNotification(deviceToken: KitTestSupport.token, payload: KitTestSupport.payload)).outcome }
            }
            var outcomes: [PushOutcome] = []
            for try await o in group { outcomes.append(o) }
            return outcomes
        }
        let batchResults = await batch
        #expect(singles.count == 100 && singles.allSatisfy { $0 == .accepted })
        #expect(batchResults.count == 600 && batchResults.allSatisfy { $0.value?.outcome == .accepted })
        await client.shutdown()
        #expect(server.record().count == 700)
    }

    @Test("Waiting sends hold no cooperative thread: other tasks run while 200 notifications wait for their answers")
    func waitingHoldsNoThread() async throws {
        let stalled = "ab" + String(KitTestSupport.token.dropFirst(2))
        let server = try KitTestSupport.startMock { $0.faults.stallTokens = [stalled] }
        defer { server.stop() }
        let client = try KitTestSupport.client(for: server)
        let finished = ManagedCounter()
        let sends = Task {
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<200 {
                    group.addTask {
                        _ = try? await client.send(PushNotification(deviceToken: stalled, payload: KitTestSupport.payload, deadline: .seconds(300)))
                        finished.increment()
                    }
                }
            }
        }
        // The mock never answers them, and their deadline is far away: no send can return before
        // the shutdown below. Were the waiting sends holding threads, the cooperative pool (one
        // thread per core) would run nothing else until then. The bounds are wide, not tight:
        // under AddressSanitizer on 2 busy cores other suites' blocking set-up held the pool for
        // over 18 s (make test-asan), and the check costs nothing when it holds at once.
        #expect(await waitUntil(seconds: 120) { server.stats().stalledRequests >= 1 })
        let other = await Task.detached { 6 * 7 }.value
        #expect(other == 42 && finished.value == 0, "\(finished.value) sends had returned")
        // The shutdown ends the waiting sends (FAILED, cancelled in flight): each returns once.
        await client.shutdown(drain: .zero)
        await sends.value
        #expect(finished.value == 200)
    }
}

/// A counter several tasks bump.
final class ManagedCounter: Sendable {
    private let count = Locked(0)
    func increment() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}
