import Foundation
import Testing
import CSwiftPushABI
import PushCore
@testable import APNsMock
@testable import PushClientCore
@testable import PushChannels
@testable import PushTransport

/// Broadcasts through the client against the mock, over real TLS + HTTP/2 on loopback: they
/// share the device notifications' replay, retry and deadline machinery, checked against the
/// mock's record; and the channel management client, with its back-off.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct BroadcastClientTests {
    let support = ClientTestSupport()
    static let update = #"{"aps":{"timestamp":1700000000,"event":"update","content-state":{"score":"1-0"}}}"#

    /// Sends `count` broadcasts to `channel` (tags 0..<count) and collects every result.
    func broadcastAll(_ client: PushClient, channel: String, count: Int) -> [push_result] {
        var results: [push_result] = []
        var page = [push_result](repeating: push_result(), count: 1000)
        var sent = 0
        var idle = 0
        channel.withCString { id in
            Self.update.withCString { payload in
                while results.count < count && idle < 100 {
                    if sent < count {
                        let n = min(500, count - sent)
                        var batch = [push_notification](repeating: push_notification(), count: n)
                        for i in 0..<n {
                            batch[i].struct_size = UInt32(MemoryLayout<push_notification>.size)
                            batch[i].push_type = PushType.liveactivity.rawValue
                            batch[i].flags = UInt32(PUSH_NOTIFICATION_HAS_EXPIRATION.rawValue)
                            batch[i].payload = payload
                            batch[i].channel_id = id
                            batch[i].tag = UInt64(sent + i)
                        }
                        let r = batch.withUnsafeBufferPointer { client.send($0.baseAddress!, count: n, timeoutMillis: 1000) }
                        #expect(r.error == nil || r.error?.status == .queueFull, "\(String(describing: r.error))")
                        sent += r.accepted
                    }
                    let got = page.withUnsafeMutableBytes {
                        client.poll(into: $0.baseAddress!, max: 1000, recordSize: MemoryLayout<push_result>.stride,
                                    timeoutMillis: sent == count ? 100 : 0).count
                    }
                    idle = (got == 0 && sent == count) ? idle + 1 : 0
                    results.append(contentsOf: page.prefix(got))
                }
            }
        }
        return results
    }

    func channel(on server: MockServer, _ policy: ChannelRegistry.StoragePolicy = .noMessageStored) throws -> String {
        guard case .created(let id) = server.channels.create(bundle: "com.example.app", policy: policy) else {
            throw ClientError(.internalError, "the mock refused a channel")
        }
        return id
    }

    @Test("GOAWAY and REFUSED_STREAM: broadcasts are replayed, and each is processed and reported exactly once")
    func replayAfterGoawayAndRefusedStreams() throws {
        var faults = MockFaults()
        faults.goawayAfterRequests = 400
        faults.refuseEveryNthStream = 7
        let server = try support.startMock { $0.faults = faults }
        defer { server.stop() }
        let id = try channel(on: server)
        let client = try support.makeClient(port: server.port, connections: 2)
        let results = broadcastAll(client, channel: id, count: 3000)
        client.close(drainMillis: 1000)

        #expect(results.count == 3000)
        #expect(Set(results.map(\.tag)).count == 3000, "one result per broadcast")
        #expect(results.allSatisfy { $0.outcome == 1 && $0.status == 200 })
        let stats = server.stats()
        #expect(stats.goaways > 0 && stats.refusedStreams > 0, "the faults happened: \(stats)")
        let records = server.record()
        #expect(records.count == 3000, "processed exactly once each")
        #expect(records.allSatisfy { $0.channelId == id && $0.topic == "com.example.app" && $0.expiration == 0 })
        #expect(Set(records.map(\.apnsId)) == Set(results.map(\.apnsID)), "the results' request ids are the processed ones")
    }

    @Test("503s are retried by the device notifications' policy; a stalled broadcast ends at its deadline")
    func retriesAndDeadlines() throws {
        var faults = MockFaults()
        faults.status503EveryNth = 3
        let server = try support.startMock { $0.faults = faults }
        defer { server.stop() }
        let id = try channel(on: server)
        let client = try support.makeClient(port: server.port) { $0.recovery.retryDelayMillis = 10 }
        let results = broadcastAll(client, channel: id, count: 60)
        #expect(results.count == 60 && results.allSatisfy { $0.outcome == 1 }, "every one accepted in the end")
        #expect(results.contains { $0.attempts > 1 }, "some took a retry")
        client.close(drainMillis: 1000)

        var stall = MockFaults()
        stall.stallEveryNth = 1
        server.setFaults(stall)
        let late = try support.makeClient(port: server.port) { $0.timing.deadlineMillis = 300 }
        let timedOut = broadcastAll(late, channel: id, count: 3)
        late.close(drainMillis: 0)
        #expect(timedOut.count == 3)
        // A token connection carries one stream until a request succeeds: the first broadcast
        // stalls in flight (Timeout), the others wait in the queue (QueueTimeout).
        let reasons = Set(timedOut.map(\.reason))
        #expect(timedOut.allSatisfy { $0.outcome == 3 }, "\(timedOut.map(\.reasonText))")
        #expect(reasons.contains(APNsReason.timeout.rawValue) && reasons.isSubset(of: [APNsReason.timeout.rawValue, APNsReason.queueTimeout.rawValue]))
    }

    @Test("The channel management client: create, read, list, delete against the management listener")
    func managementClient() throws {
        let server = try support.startMock { $0.channelManagementPort = 0 }
        defer { server.stop() }
        let configuration = try support.configuration(port: server.port, connections: 1)
        let client = try ChannelManagementClient(configuration: configuration, host: "localhost", port: server.channelManagementPort)
        let created = try client.send(ChannelRequest(.create(storagePolicy: 1), bundleId: "com.example.app"), timeoutMillis: 5000).get()
        #expect(created.status == 201 && created.succeeded && created.requestId.count == 36)
        let id = created.channelId
        #expect(server.channels.ids(bundle: "com.example.app") == [id])
        let read = try client.send(ChannelRequest(.read(channelId: id), bundleId: "com.example.app"), timeoutMillis: 5000).get()
        #expect(read.status == 200 && read.body.withUnsafeBytes { ChannelMessages.configuration($0) } == .success(.init(storagePolicy: 1)))
        let list = try client.send(ChannelRequest(.list, bundleId: "com.example.app"), timeoutMillis: 5000).get()
        #expect(list.body.withUnsafeBytes { ChannelMessages.channelIds($0) } == .success([id]))
        let deleted = try client.send(ChannelRequest(.delete(channelId: id), bundleId: "com.example.app"), timeoutMillis: 5000).get()
        #expect(deleted.status == 204 && deleted.succeeded)
        let again = try client.send(ChannelRequest(.delete(channelId: id), bundleId: "com.example.app"), timeoutMillis: 5000).get()
        #expect(again.status == 400 && again.reason == .channelNotRegistered && again.reasonText == "ChannelNotRegistered")
        #expect(server.stats().connections == 1, "one connection served every call")
    }

    /// A management client of `server` whose key APNs refuses (a back-off of at least 30 s
    /// after a refusal; `configure` changes the rest), after its first call was answered 403
    /// `InvalidProviderToken`.
    private func refusedManagementClient(_ server: MockServer,
                                         _ configure: (inout ClientConfiguration) -> Void) throws -> ChannelManagementClient {
        var configuration = try support.configuration(port: server.port, connections: 1)
        configuration.credentials.tokenKeyPEM = try FileBytes.read(path: support.pki + "/AuthKey_WRONGKEY01.p8", limit: 65536)
        configuration.recovery.reconnectFirstDelayMillis = 60_000
        configure(&configuration)
        let client = try ChannelManagementClient(configuration: configuration, host: "localhost", port: server.channelManagementPort)
        let refused = try client.send(ChannelRequest(.list, bundleId: "com.example.app"), timeoutMillis: 5000).get()
        #expect(refused.status == 403 && refused.reason == .invalidProviderToken)
        return client
    }

    @Test("Refused credentials make later management calls back off instead of reconnecting at once")
    func managementBacksOffAfterRefusals() throws {
        let server = try support.startMock { $0.channelManagementPort = 0 }
        defer { server.stop() }
        let client = try refusedManagementClient(server) { _ in }
        let connections = server.stats().connections
        let next = client.send(try ChannelRequest(.list, bundleId: "com.example.app"), timeoutMillis: 200)
        guard case .failure(let e) = next else {
            Issue.record("a call during the back-off went out")
            return
        }
        #expect(e.status == .connect && e.description.contains("backing off") && e.description.contains("InvalidProviderToken"))
        #expect(server.stats().connections == connections, "no new connection during the back-off")
    }

    @Test("The management client's back-off is on the configuration's clock: it ends when that clock has passed it, however little real time went by")
    func managementBackoffFollowsTheClock() throws {
        let server = try support.startMock { $0.channelManagementPort = 0 }
        defer { server.stop() }
        let clock = ManualClock(wallSeconds: SystemClock.shared.wallSeconds())
        clock.advance(seconds: 1)
        let client = try refusedManagementClient(server) {
            // A back-off of 30 to 60 s: no real time this test takes reaches it.
            $0.recovery.reconnectMaxDelayMillis = 60_000
            $0.timing.clock = clock
        }
        let connections = server.stats().connections
        guard case .failure(let e) = client.send(try ChannelRequest(.list, bundleId: "com.example.app"), timeoutMillis: 200) else {
            Issue.record("a call during the back-off went out")
            return
        }
        #expect(e.status == .connect && e.description.contains("backing off"), "\(e.description)")
        // The clock passes the longest delay: the next call connects at once and is answered.
        clock.advance(seconds: 60)
        let again = client.send(try ChannelRequest(.list, bundleId: "com.example.app"), timeoutMillis: 5000)
        guard case .success(let answer) = again else {
            Issue.record("the back-off did not end with the clock: \(again)")
            return
        }
        #expect(answer.status == 403 && answer.reason == .invalidProviderToken)
        #expect(server.stats().connections == connections + 1, "one new connection once the clock allowed it")
    }

    @Test("Management requests the server never processed (REFUSED_STREAM, after GOAWAY) are sent again; each call gets one answer")
    func managementReplaysUnprocessedRequests() throws {
        var faults = MockFaults()
        faults.refuseEveryNthStream = 2
        faults.goawayAfterRequests = 3
        let server = try support.startMock {
            $0.channelManagementPort = 0
            $0.faults = faults
        }
        defer { server.stop() }
        let configuration = try support.configuration(port: server.port, connections: 1)
        let client = try ChannelManagementClient(configuration: configuration, host: "localhost", port: server.channelManagementPort)
        var created: [String] = []
        for _ in 0..<8 {
            let a = try client.send(ChannelRequest(.create(storagePolicy: 0), bundleId: "com.example.app"), timeoutMillis: 5000).get()
            #expect(a.status == 201, "\(a)")
            created.append(a.channelId)
        }
        let listed = try client.send(ChannelRequest(.list, bundleId: "com.example.app"), timeoutMillis: 5000).get()
        #expect(listed.body.withUnsafeBytes { ChannelMessages.channelIds($0) } == .success(created), "each create made exactly one channel")
        let stats = server.stats()
        #expect(stats.refusedStreams > 0 && stats.goaways > 0 && stats.connections > 1, "the faults happened: \(stats)")
    }

    @Test("An answer larger than the client's bound fails the call instead of passing a cut list for whole; the next call still works")
    func managementRefusesAnOversizeAnswer() throws {
        let server = try support.startMock { $0.channelManagementPort = 0 }
        defer { server.stop() }
        let configuration = try support.configuration(port: server.port, connections: 1)
        // 4 MB in production; here a bound 30 created ids (24 characters each, quoted, with
        // commas) overrun, while one create's answer (no body) stays under it.
        let client = try ChannelManagementClient(configuration: configuration, host: "localhost", port: server.channelManagementPort,
                                                 maxAnswerBytes: 512)
        for _ in 0..<30 {
            let a = try client.send(ChannelRequest(.create(storagePolicy: 0), bundleId: "com.example.app"), timeoutMillis: 5000).get()
            #expect(a.status == 201, "\(a)")
        }
        let list = try ChannelRequest(.list, bundleId: "com.example.app")
        switch client.send(list, timeoutMillis: 5000) {
        case .success(let a):
            Issue.record("a \(a.body.count)-byte list passed a 512-byte bound")
        case .failure(let e):
            #expect(e.status == .internalError)
            #expect(e.description.contains("larger than 512 bytes"), "\(e)")
        }
        let wide = try ChannelManagementClient(configuration: configuration, host: "localhost", port: server.channelManagementPort)
        let listed = try wide.send(list, timeoutMillis: 5000).get()
        guard case .success(let ids) = listed.body.withUnsafeBytes({ ChannelMessages.channelIds($0) }) else {
            Issue.record("no list")
            return
        }
        #expect(ids.count == 30 && listed.body.count > 512)
        let again = try client.send(ChannelRequest(.create(storagePolicy: 0), bundleId: "com.example.app"), timeoutMillis: 5000).get()
        #expect(again.status == 201, "the bounded client still works after refusing an answer")
    }

    @Test("A connection the server closed after answering is replaced for the next management call")
    func managementReplacesAConnectionClosedWhileIdle() throws {
        var faults = MockFaults()
        faults.killConnectionAfterRequests = 1
        let server = try support.startMock {
            $0.channelManagementPort = 0
            $0.faults = faults
        }
        defer { server.stop() }
        let configuration = try support.configuration(port: server.port, connections: 1)
        let client = try ChannelManagementClient(configuration: configuration, host: "localhost", port: server.channelManagementPort)
        for call in 1...3 {
            let a = try client.send(ChannelRequest(.list, bundleId: "com.example.app"), timeoutMillis: 5000).get()
            #expect(a.status == 200, "call \(call): \(a)")
            // The server has closed that connection (and loopback has delivered its FIN).
            #expect(waitUntil(seconds: 5) { server.stats().killedConnections == call && server.stats().openConnections == 0 })
        }
        #expect(server.stats().connections == 3)
    }
}
