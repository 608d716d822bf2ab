import PushCore

/// An APNs push type (`apns-push-type`, `Tables/push_types.tsv`: the constants below), with the
/// topic suffix, default priority and payload limit Apple gives it.
///
/// A struct, not an enum, so that push types can be added without breaking a `switch`.
public struct APNsPushType: Hashable, Sendable, CustomStringConvertible {
    let core: PushType

    init(_ core: PushType) { self.core = core }

    /// The push type for an `apns-push-type` header value ("alert", "liveactivity"...), or nil.
    public init?(headerValue: String) {
        guard let core = PushType(headerValue: headerValue) else { return nil }
        self.core = core
    }

    /// The `apns-push-type` header value.
    public var headerValue: String { "\(core.headerValue)" }
    /// The suffix the topic must end with ("" when any topic goes): ".voip" for voip.
    public var topicSuffix: String { core.topicSuffix }
    /// The priority used when a notification leaves it unset.
    public var defaultPriority: PushPriority { PushPriority(rawValue: Int(core.defaultPriority)) }
    /// The largest payload APNs accepts for it, in bytes.
    public var payloadLimit: Int { core.payloadLimit }

    /// The header value.
    public var description: String { headerValue }
}
