/// `apns-priority`: how urgently APNs delivers the notification (10, 5 or 1; background
/// notifications must use 5). Unset, a notification takes its push type's default.
public struct PushPriority: Hashable, Sendable, CustomStringConvertible {
    /// The header's value.
    public let rawValue: Int

    /// A priority by value: 10, 5 or 1 (others are refused when sent, `.badPriority`).
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// 10: deliver at once.
    public static let immediately = PushPriority(rawValue: 10)
    /// 5: deliver with the device's power in mind (required for background notifications).
    public static let consideringDevicePower = PushPriority(rawValue: 5)
    /// 1: deliver when the device's power allows, perhaps not at all.
    public static let prioritizingDevicePower = PushPriority(rawValue: 1)

    /// The value.
    public var description: String { String(rawValue) }
}
