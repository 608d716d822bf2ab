import Testing
@testable import APNsMock
@testable import SwiftPushKit

/// Broadcast push and the channel API through the async client, against the mock's
/// management port and its `/4/broadcasts` path.
@Suite("Broadcasts and channels", .timeLimit(.minutes(5)))
struct BroadcastTests {
    static let update = PushPayload(json: #"{"aps":{"timestamp":1700000000,"event":"update","content-state":{"score":"2-1"}}}"#)

    @Test("Create a channel, broadcast to it, read it, list it, delete it; a broadcast's result carries its apns-request-id")
    func channelLife() async throws {
        let server = try KitTestSupport.startMock { $0.channelManagementPort = 0 }
        defer { server.stop() }
        let client = try KitTestSupport.client(for: server) {
            $0.channelManagement = .custom(host: "localhost", port: server.channelManagementPort)
        }
        let id = try await client.createChannel(storage: .mostRecentMessageStored)
        #expect(try await client.readChannel(id) == .mostRecentMessageStored)
        #expect(try await client.listChannels(bundleID: "com.example.app") == [id])
        let requestID = APNsID.random()
        let r = try await client.send(.broadcast(channel: id, payload: Self.update, expiration: .after(.seconds(3600)), apnsID: requestID))
        #expect(r.outcome == .accepted && r.status == 200 && r.apnsID == requestID, "\(r)")
        try await client.deleteChannel(id)
        #expect(try await client.listChannels().isEmpty)
        // A broadcast to the deleted channel: APNs refuses it as a result.
        let gone = try await client.send(.broadcast(channel: id, payload: Self.update, expiration: .immediately))
        #expect(gone.outcome == .rejected && gone.status == 400 && gone.reason == .channelNotRegistered, "\(gone)")
        await client.shutdown()
    }

    @Test("A channel call APNs refuses throws .rejected with its status and reason")
    func rejectedChannelCall() async throws {
        let server = try KitTestSupport.startMock { $0.channelManagementPort = 0 }
        defer { server.stop() }
        let client = try KitTestSupport.client(for: server) {
            $0.channelManagement = .custom(host: "localhost", port: server.channelManagementPort)
        }
        do {
            _ = try await client.readChannel("dHN0LTEyMzQ1Njc4OTAxMg==")
            Issue.record("read an unknown channel")
        } catch let error as PushError {
            #expect(error.code == .rejected && error.status == 400 && error.reason == .channelNotRegistered, "\(error)")
        }
        await #expect(throws: PushError.self) { try await client.readChannel("not base64!") }
        await client.shutdown()
    }

    @Test("Channel calls without a known management host say so")
    func noManagementHost() async throws {
        let server = try KitTestSupport.startMock()
        defer { server.stop() }
        let client = try KitTestSupport.client(for: server)
        await #expect(throws: PushError(.badOption, "no channel management host is known for localhost: set channelManagement")) {
            try await client.listChannels()
        }
        await client.shutdown()
    }
}
