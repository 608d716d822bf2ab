/// One notification: to a device (by its token) or a broadcast to a channel's subscribers, with
/// its payload and headers. A value: build it once and send it as often as needed; many
/// notifications may share one payload without copying its bytes (multicast).
///
/// Nothing is checked when it is built: the send checks every field by Apple's rules (the same
/// rules, in the same code, as the C ABI's `push_client_send`) and throws `PushError` naming the
/// field (`.badDeviceToken`, `.badTopic`, `.payloadTooLarge`...).
///
/// ```swift
/// let note = PushNotification(deviceToken: "00fc13ad...", payload: try PushPayload(builder))
/// let live = PushNotification.broadcast(channel: id, payload: update, expiration: .immediately)
/// ```
public struct PushNotification: Sendable {
    /// Where a notification goes.
    public enum Destination: Sendable, Equatable {
        /// A device: its token as hex digits (`POST /3/device/<token>`).
        case device(token: String)
        /// Every device subscribed to a broadcast channel (`POST /4/broadcasts/apps/<bundle
        /// id>`; iOS 18 Live Activities): the channel's id (`APNsClient.createChannel`).
        case channel(id: String)
    }

    /// Where it goes.
    public var destination: Destination
    /// The JSON body.
    public var payload: PushPayload
    /// `apns-push-type` (default `.alert`; a broadcast must be `.liveactivity`).
    public var pushType: APNsPushType
    /// `apns-topic`: nil takes the configuration's `defaultTopic`. A broadcast's is the app's
    /// bundle id.
    public var topic: String?
    /// `apns-priority`: nil takes the push type's default (10; 5 for background).
    public var priority: PushPriority?
    /// `apns-expiration`: nil leaves it to APNs (device notifications; a broadcast needs one).
    public var expiration: PushExpiration?
    /// `apns-collapse-id` (device notifications only, at most 64 bytes): a notification with
    /// the same id replaces the one the device shows.
    public var collapseID: String?
    /// `apns-id`: nil lets the library make a random one (every result carries it).
    public var apnsID: APNsID?
    /// How long the notification may take, from its send to its outcome; nil takes the
    /// configuration's `timing.deadline`. Past it the notification ends FAILED (QueueTimeout
    /// if never sent, Timeout if unanswered), checked every 50 ms.
    public var deadline: Duration?

    /// A notification to `destination` with every header left to its default.
    public init(destination: Destination, payload: PushPayload, pushType: APNsPushType = .alert, topic: String? = nil,
                priority: PushPriority? = nil, expiration: PushExpiration? = nil, collapseID: String? = nil,
                apnsID: APNsID? = nil, deadline: Duration? = nil) {
        self.destination = destination
        self.payload = payload
        self.pushType = pushType
        self.topic = topic
        self.priority = priority
        self.expiration = expiration
        self.collapseID = collapseID
        self.apnsID = apnsID
        self.deadline = deadline
    }

    /// A notification to the device with `deviceToken` (hex digits).
    public init(deviceToken: String, payload: PushPayload, pushType: APNsPushType = .alert, topic: String? = nil,
                priority: PushPriority? = nil, expiration: PushExpiration? = nil, collapseID: String? = nil,
                apnsID: APNsID? = nil, deadline: Duration? = nil) {
        self.init(destination: .device(token: deviceToken), payload: payload, pushType: pushType, topic: topic,
                  priority: priority, expiration: expiration, collapseID: collapseID, apnsID: apnsID, deadline: deadline)
    }

    /// A broadcast to the subscribers of `channel` (push type liveactivity; `topic` nil takes
    /// the configuration's `defaultTopic` as the bundle id). APNs requires the expiration
    /// (`.immediately` for a channel that stores no message).
    public static func broadcast(channel: String, payload: PushPayload, expiration: PushExpiration, topic: String? = nil,
                                 priority: PushPriority? = nil, apnsID: APNsID? = nil, deadline: Duration? = nil) -> PushNotification {
        PushNotification(destination: .channel(id: channel), payload: payload, pushType: .liveactivity, topic: topic,
                         priority: priority, expiration: expiration, apnsID: apnsID, deadline: deadline)
    }
}
