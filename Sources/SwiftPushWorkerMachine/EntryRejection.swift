import PushCore

/// Why an entry cannot be sent: a REJECTED outcome with this reason and detail. Reasons are
/// the worker's own (they never reached APNs): `WorkerReason`, from `Tables/worker_reasons.tsv`.
public struct EntryRejection: Error, Sendable, Equatable {
    /// The reason name recorded in the outcome (`MissingId`, `UnknownApp`, `BadDeviceToken`...).
    public let reason: String
    /// The detail: the library's validation message, or the worker's.
    public let detail: String

    /// A rejection for `reason` (a row of `Tables/worker_reasons.tsv`) with `detail`.
    public init(_ reason: WorkerReason, _ detail: String) {
        self.reason = reason.rawValue
        self.detail = detail
    }

    /// The rejection for a broken NotificationRules rule, named after the library's status.
    init(_ violation: NotificationRules.Violation) {
        let reason: WorkerReason
        switch violation.status {
        case .badDeviceToken: reason = .badDeviceToken
        case .badTopic: reason = .badTopic
        case .badPushType: reason = .badPushType
        case .badPriority: reason = .badPriority
        case .payloadTooLarge: reason = .payloadTooLarge
        case .badCollapseId: reason = .badCollapseId
        case .badExpiration: reason = .badExpiration
        default: reason = .badPayload
        }
        self.init(reason, violation.message)
    }
}
