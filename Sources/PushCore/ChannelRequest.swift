/// One channel management request (apns.md, "Broadcast push and channels"), checked and laid
/// out before anything is sent: the method, the path under `/1/apps/<bundle id>/`, the
/// `apns-channel-id` header and the body.
public struct ChannelRequest: Equatable, Sendable {
    /// What the request does.
    public enum Operation: Equatable, Sendable {
        /// `POST /1/apps/<bundle id>/channels` with the configuration: 201 and the new id.
        case create(storagePolicy: Int32)
        /// `GET /1/apps/<bundle id>/channels` with `apns-channel-id`: 200 and the configuration.
        case read(channelId: String)
        /// `DELETE /1/apps/<bundle id>/channels` with `apns-channel-id`: 204.
        case delete(channelId: String)
        /// `GET /1/apps/<bundle id>/all-channels`: 200 and `{"channels": [...]}`.
        case list
    }

    /// The operation.
    public let operation: Operation
    /// The app the channels belong to.
    public let bundleId: String
    /// `apns-request-id` to send (lowercase UUID), or nil to let APNs make one.
    public let requestId: String?

    /// Checks the request: the bundle id (`BroadcastRules.checkBundleId`), the channel id
    /// (`BroadcastRules.checkChannelId`), the storage policy, the request id.
    public init(_ operation: Operation, bundleId: String, requestId: String? = nil) throws(NotificationRules.Violation) {
        if let v = Self.check(bundleId, with: BroadcastRules.checkBundleId) { throw v }
        switch operation {
        case .create(let policy):
            if let v = BroadcastRules.checkStoragePolicy(policy) { throw v }
        case .read(let id), .delete(let id):
            if let v = Self.check(id, with: BroadcastRules.checkChannelId) { throw v }
        case .list:
            break
        }
        if let requestId {
            if let v = Self.check(requestId, with: NotificationRules.checkApnsId) { throw v }
        }
        self.operation = operation
        self.bundleId = bundleId
        self.requestId = requestId?.lowercased()
    }

    /// The HTTP method.
    public var method: String {
        switch operation {
        case .create: return "POST"
        case .read, .list: return "GET"
        case .delete: return "DELETE"
        }
    }

    /// The request path.
    public var path: String {
        if case .list = operation { return "/1/apps/\(bundleId)/all-channels" }
        return "/1/apps/\(bundleId)/channels"
    }

    /// The `apns-channel-id` header's value, for read and delete.
    public var channelId: String? {
        switch operation {
        case .read(let id), .delete(let id): return id
        case .create, .list: return nil
        }
    }

    /// The body: a create's configuration, empty otherwise.
    public var body: [UInt8] {
        if case .create(let policy) = operation { return ChannelMessages.Configuration(storagePolicy: policy).json }
        return []
    }

    /// The statuses that mean success: create 201 (some report 200: accepted too), read and
    /// list 200, delete 204 (200 accepted too: nothing is lost by being lenient there).
    public func isSuccess(status: Int32) -> Bool {
        switch operation {
        case .create: return status == 201 || status == 200
        case .delete: return status == 204 || status == 200
        case .read, .list: return status == 200
        }
    }

    private static func check(_ s: String, with rule: (UnsafeRawBufferPointer) -> NotificationRules.Violation?) -> NotificationRules.Violation? {
        var copy = s
        return copy.withUTF8 { rule(UnsafeRawBufferPointer($0)) }
    }
}
