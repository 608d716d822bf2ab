/// JSON: the counts, each named for its unit (notifications), `done_notifications` and
/// `gone_notifications` (410s), and the reasons as a list, most frequent first.
extension OutcomeCounts: Encodable {
    private enum Keys: String, CodingKey {
        case enqueued = "enqueued_notifications", accepted = "accepted_notifications", rejected = "rejected_notifications"
        case failed = "failed_notifications", done = "done_notifications", gone = "gone_notifications", reasons
    }
    private struct Reason: Encodable { let reason: String, notifications: Int }

    /// The reasons, most frequent first (then by name).
    public var reasonsByCount: [(reason: String, count: Int)] {
        reasons.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        try c.encode(enqueued, forKey: .enqueued)
        try c.encode(accepted, forKey: .accepted)
        try c.encode(rejected, forKey: .rejected)
        try c.encode(failed, forKey: .failed)
        try c.encode(done, forKey: .done)
        try c.encode(gone, forKey: .gone)
        try c.encode(reasonsByCount.map { Reason(reason: $0.reason, notifications: $0.count) }, forKey: .reasons)
    }
}
