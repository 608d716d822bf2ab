import PushCore

/// Why an entry cannot be sent: a REJECTED outcome with this reason and detail. Reasons are
/// the worker's own words (they never reached APNs), listed in docs/worker.md.
public struct EntryRejection: Error, Sendable, Equatable {
    /// The reason name recorded in the outcome (`MissingId`, `UnknownApp`, `BadDeviceToken`...).
    public let reason: String
    /// The detail: the library's validation message, or the worker's.
    public let detail: String

    /// A rejection with `reason` and `detail`.
    public init(_ reason: String, _ detail: String) {
        self.reason = reason
        self.detail = detail
    }

    /// The rejection for a broken NotificationRules rule, named after the library's status.
    init(_ violation: NotificationRules.Violation) {
        let reason: String
        switch violation.status {
        case .badDeviceToken: reason = "BadDeviceToken"
        case .badTopic: reason = "BadTopic"
        case .badPushType: reason = "BadPushType"
        case .badPriority: reason = "BadPriority"
        case .payloadTooLarge: reason = "PayloadTooLarge"
        case .badCollapseId: reason = "BadCollapseId"
        case .badExpiration: reason = "BadExpiration"
        default: reason = "BadPayload"
        }
        self.init(reason, violation.message)
    }
}
