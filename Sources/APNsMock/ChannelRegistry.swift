import PushCore
import PushTransport

/// The broadcast channels the mock knows, per bundle id, as APNs keeps them for one
/// environment (apns.md, "Broadcast push and channels"): at most `limit` per app
/// (`CannotCreateChannelConfig` beyond), a storage policy fixed at creation, ids that are never
/// reused after a delete, and apps for which broadcast push is not enabled
/// (`FeatureNotEnabled`).
///
/// One registry per server, which serves one environment: channels do not cross environments
/// because a sandbox mock and a production mock never share one. Used by the I/O thread (the
/// management listener creates and deletes, broadcasts look up) and by tests on any thread,
/// so every access holds `lock`; a broadcast costs one uncontended lock round trip.
public final class ChannelRegistry: @unchecked Sendable {
    /// A channel's message storage policy (Apple: 0 No Message Stored, 1 Most Recent Message
    /// Stored).
    public enum StoragePolicy: Int, Sendable {
        case noMessageStored = 0
        case mostRecentMessageStored = 1
    }

    /// What creating a channel came to.
    public enum CreateResult: Equatable, Sendable {
        case created(id: String)
        case refused(APNsReason)
    }

    /// Channels per app (Apple: 10,000 per app and environment).
    public let limit: Int
    /// Bundle ids whose broadcasts and channel requests get FeatureNotEnabled.
    public let disabledBundleIds: Set<String>

    private let lock = PThreadMutex()
    /// Channel id → (bundle id, policy), and each app's ids in creation order (list answers).
    private var channels: [String: (bundle: String, policy: StoragePolicy)] = [:]
    private var idsByBundle: [String: [String]] = [:]
    /// Makes every id distinct from all before it, deleted ones included.
    private var serial: UInt64 = 0
    private var random = SystemRandomNumberGenerator()

    /// A registry allowing `limit` channels per app.
    public init(limit: Int = 10_000, disabledBundleIds: Set<String> = []) {
        self.limit = limit
        self.disabledBundleIds = disabledBundleIds
    }

    /// Creates a channel for `bundle`: its new id, or why not.
    public func create(bundle: String, policy: StoragePolicy) -> CreateResult {
        if disabledBundleIds.contains(bundle) { return .refused(.featureNotEnabled) }
        return lock.withLock {
            if idsByBundle[bundle, default: []].count >= limit { return .refused(.cannotCreateChannelConfig) }
            serial += 1
            let id = Self.newId(serial: serial, random: random.next())
            channels[id] = (bundle, policy)
            idsByBundle[bundle, default: []].append(id)
            return .created(id: id)
        }
    }

    /// The channel `id` as `bundle` may see it: its policy, or ChannelNotRegistered (no such
    /// channel) or TopicMismatch (another app's).
    public func lookup(bundle: String, id: String) -> Result<StoragePolicy, APNsError> {
        lock.withLock {
            guard let c = channels[id] else { return .failure(APNsError(.channelNotRegistered)) }
            return c.bundle == bundle ? .success(c.policy) : .failure(APNsError(.topicMismatch))
        }
    }

    /// Deletes the channel; its id is never issued again.
    public func delete(bundle: String, id: String) -> APNsReason {
        lock.withLock {
            guard let c = channels[id] else { return .channelNotRegistered }
            guard c.bundle == bundle else { return .topicMismatch }
            channels[id] = nil
            idsByBundle[bundle]?.removeAll { $0 == id }
            return .none
        }
    }

    /// The app's channel ids, oldest first.
    public func ids(bundle: String) -> [String] {
        lock.withLock { idsByBundle[bundle] ?? [] }
    }

    /// A reason as an `Error`, for `Result`.
    public struct APNsError: Error, Equatable, Sendable {
        public let reason: APNsReason
        init(_ reason: APNsReason) { self.reason = reason }
    }

    /// 16 bytes (the serial, then random bits) as padded standard base64: 24 characters, the
    /// shape of the ids in Apple's examples (whose size Apple says not to rely on).
    private static func newId(serial: UInt64, random: UInt64) -> String {
        var bytes = [UInt8](repeating: 0, count: 16)
        for i in 0..<8 {
            bytes[i] = UInt8(truncatingIfNeeded: serial >> (56 - 8 * UInt64(i)))
            bytes[8 + i] = UInt8(truncatingIfNeeded: random >> (8 * UInt64(i)))
        }
        let standard = Base64URL.encode(bytes).map { $0 == UInt8(ascii: "-") ? UInt8(ascii: "+") : $0 == UInt8(ascii: "_") ? UInt8(ascii: "/") : $0 }
        return String(decoding: standard, as: UTF8.self) + "=="
    }
}
