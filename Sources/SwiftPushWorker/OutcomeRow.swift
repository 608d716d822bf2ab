import SwiftPushWorkerMachine

/// One line of what the outcomes stream says, whatever its format: one notification's outcome,
/// or a group of a multicast's notifications that share one (its accepted tokens, a refusal of
/// the whole entry), with how many and their indexes (docs/worker.md, "Outcome records").
/// `swiftpush outcomes` prints these; tests check them.
public struct OutcomeRow: Sendable, Equatable {
    /// The outcomes stream entry it came from, its format (1, 2 or 3) and the worker that wrote it.
    public var streamID: String
    public var format: Int
    public var worker: String
    /// The stream entry of the notification(s), and its kind (format 3; "" before).
    public var entry: String
    public var kind: String = ""
    /// The notification's index in the entry (format 3; nil for a group and before).
    public var index: Int?
    /// The notification id, the token (when the record gives it), the apns-id (given, or
    /// derived from id and token as the worker derives it).
    public var id: String
    public var token: String = ""
    public var apnsID: String = ""
    /// ACCEPTED, REJECTED or FAILED, APNs's status, the reason and detail.
    public var outcome: String
    public var status: Int = 0
    public var reason: String = ""
    public var detail: String = ""
    /// The app and campaign ("" when none).
    public var app: String = ""
    public var campaign: String = ""
    public var attempts = 0
    public var deliveries = 0
    public var latencyUs: Int64 = 0
    public var timestampMs: Int64 = 0
    public var maybeDelivered = false
    /// How many notifications the line stands for (1, or a group's size) and, for a group, their
    /// indexes as ranges.
    public var count = 1
    public var indexes: String?

    public init(streamID: String, format: Int, worker: String, entry: String, id: String, outcome: String) {
        self.streamID = streamID
        self.format = format
        self.worker = worker
        self.entry = entry
        self.id = id
        self.outcome = outcome
    }
}
