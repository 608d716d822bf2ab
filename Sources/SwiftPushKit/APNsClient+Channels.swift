import PushCore
import PushChannels
import PushClientCore

/// Broadcast channels (iOS 18 Live Activities; apns.md "Broadcast push and channels"): create,
/// read, delete and list an app's channels on APNs's channel management host (Apple's for the
/// environment, or `APNsConfiguration.channelManagement`), with the client's credentials and
/// proxy. Each call is one request on the client's channel thread (one for all calls; the
/// caller's task is suspended); calls take turns on one connection, opened by the first call. Broadcasting is
/// `send(PushNotification.broadcast(channel:payload:expiration:))`.
///
/// Errors: `.rejected` when APNs refused (its `status` and `reason` on the error: for example
/// `.cannotCreateChannelConfig` at 10,000 channels, `.channelNotRegistered`), `.badTopic` (the
/// bundle id), `.badChannelId`, `.connect`, `.tls`, `.timeout` (the call may or may not have
/// been carried out: a create is never repeated, list to see). A cancelled task ends the wait
/// at once with `CancellationError` (a call still waiting for its turn is not made; one under way
/// may still be carried out).
extension APNsClient {
    /// Creates a channel for the app `bundleID` (nil: the configuration's `defaultTopic`) and
    /// returns its id.
    public func createChannel(bundleID: String? = nil, storage: ChannelStoragePolicy, timeout: Duration = .seconds(10)) async throws -> String {
        let answer = try await call(.create(storagePolicy: storage.rawValue), bundleID: bundleID, timeout: timeout)
        if let why = ChannelMessages.answeredIdViolation(answer.channelId, "APNs created the channel, but its apns-channel-id") {
            throw PushError(.internalError, why)
        }
        return answer.channelId
    }

    /// The storage policy of channel `id` of the app `bundleID` (nil: `defaultTopic`).
    public func readChannel(_ id: String, bundleID: String? = nil, timeout: Duration = .seconds(10)) async throws -> ChannelStoragePolicy {
        let answer = try await call(.read(channelId: id), bundleID: bundleID, timeout: timeout)
        guard case .success(let c) = answer.body.withUnsafeBytes({ ChannelMessages.configuration($0) }),
              let policy = ChannelStoragePolicy(rawValue: c.storagePolicy) else {
            throw PushError(.internalError, "APNs answered the read with a body that is not a channel configuration")
        }
        return policy
    }

    /// Deletes channel `id` of the app `bundleID` (nil: `defaultTopic`); its id is never reused.
    public func deleteChannel(_ id: String, bundleID: String? = nil, timeout: Duration = .seconds(10)) async throws {
        _ = try await call(.delete(channelId: id), bundleID: bundleID, timeout: timeout)
    }

    /// The ids of every channel of the app `bundleID` (nil: `defaultTopic`), as APNs wrote them.
    /// An id that breaks the rule of a created one fails the list (`.internalError`, naming it).
    public func listChannels(bundleID: String? = nil, timeout: Duration = .seconds(10)) async throws -> [String] {
        let answer = try await call(.list, bundleID: bundleID, timeout: timeout)
        switch answer.body.withUnsafeBytes({ ChannelMessages.channelIds($0) }) {
        case .success(let ids): return ids
        case .failure(let e): throw PushError(.internalError, "APNs answered the list with a body that is not a list of channels: \(e.message)")
        }
    }

    /// One management request on a library thread; APNs's refusals become `.rejected`.
    private func call(_ operation: ChannelRequest.Operation, bundleID: String?, timeout: Duration) async throws -> ChannelManagementClient.Answer {
        let (request, answer) = try await channelExchange(operation, bundleID: bundleID, timeout: timeout)
        guard answer.succeeded else {
            let reason = answer.reason == .unknown ? PushReason(unknown: answer.reasonText) : PushReason(answer.reason)
            throw PushError(.rejected, "APNs refused the \(request.method) \(request.path): \(answer.status) \(answer.reasonText)",
                            status: Int(answer.status), reason: reason)
        }
        return answer
    }

    /// One management request on a library thread, and APNs's answer as it came, a refusal
    /// included (with its `apns-request-id`: the CLI prints every answer whole). Throws for a
    /// request that breaks a rule and when no answer came (`.connect`, `.tls`, `.timeout`).
    package func channelExchange(_ operation: ChannelRequest.Operation, bundleID: String?,
                                 timeout: Duration) async throws -> (ChannelRequest, ChannelManagementClient.Answer) {
        guard let bundle = bundleID ?? defaultTopic else {
            throw PushError(.badTopic, "no bundle id: name it, or set the configuration's defaultTopic")
        }
        let request: ChannelRequest
        do throws(NotificationRules.Violation) {
            request = try ChannelRequest(operation, bundleId: bundle)
        } catch {
            throw PushError(error)
        }
        let client = try channelClient()
        let millis = APNsEngine.millis(timeout)
        switch await channelCalls.run({ client.send(request, timeoutMillis: millis) }) {
        case .success(let answer)?: return (request, answer)
        case .failure(let e)?: throw PushError(e)
        case nil: throw CancellationError()
        }
    }
}
