import Logging
import ServiceLifecycle
import Testing
@testable import APNsMock
@testable import SwiftPushKit

/// The client as a ServiceLifecycle `Service`: a host's graceful shutdown drains it (every
/// notification sent gets its result) and closes it.
@Suite("ServiceLifecycle", .timeLimit(.minutes(5)))
struct ServiceTests {
    @Test("A graceful shutdown drains what is in flight (answers 200 ms late all accepted), then the client is closed")
    func gracefulShutdownDrains() async throws {
        let server = try KitTestSupport.startMock { $0.faults.responseDelayMillis = 200 }
        defer { server.stop() }
        let client = try KitTestSupport.client(for: server) { $0.pool.queueCapacity = 64 }
        let group = ServiceGroup(services: [client], logger: KitTestSupport.quiet)
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            // 300 notifications: more than the client holds at once, so some still wait for a
            // slot when the shutdown comes.
            let results = client.send(contentsOf: KitTestSupport.notifications(300))
            #expect(await waitUntil(seconds: 10) { server.stats().requests >= 1 })
            await group.triggerGracefulShutdown()
            let all = await KitTestSupport.collect(results)
            #expect(all.count == 300 && Set(all.map(\.index)).count == 300)
            let accepted = all.filter { $0.value?.outcome == .accepted }.count
            let refused = all.filter { $0.error?.code == .closed }.count
            #expect(accepted + refused == 300, "\(accepted) accepted, \(refused) refused as closed")
            #expect(accepted >= 64, "what the client held was drained: \(accepted)")
            try await tasks.waitForAll() // run() returned
        }
        await #expect(throws: PushError.self) {
            try await client.send(PushNotification(deviceToken: KitTestSupport.token, payload: KitTestSupport.payload))
        }
        #expect(server.record().count == client.stats().accepted)
    }

    @Test("Cancelled instead (the group's task is cancelled), the client closes without draining and every notification still ends once")
    func cancellationClosesWithoutDrain() async throws {
        let stalled = "0c" + String(KitTestSupport.token.dropFirst(2))
        let server = try KitTestSupport.startMock { $0.faults.stallTokens = [stalled] }
        defer { server.stop() }
        let client = try KitTestSupport.client(for: server)
        let group = ServiceGroup(services: [client], logger: KitTestSupport.quiet)
        let running = Task { try await group.run() }
        let results = client.send(contentsOf: KitTestSupport.notifications(20, token: stalled))
        #expect(await waitUntil(seconds: 10) { server.stats().stalledRequests >= 1 })
        running.cancel()
        _ = try? await running.value
        let all = await KitTestSupport.collect(results)
        #expect(all.count == 20)
        #expect(all.allSatisfy { $0.value?.outcome == .failed || $0.error?.code == .closed }, "\(all.map(\.result))")
    }
}
