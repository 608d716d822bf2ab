/// JSON: every figure under a name that says its unit, in both units, the other unit's (and,
/// for `mixed`, both) null: `done_notifications` or `done_entries`, `notifications_per_s` or
/// `entries_per_s`. A script reads one shape and never mistakes entries for notifications
/// (issue 35). The rate to a tenth, the time left in seconds.
extension ProgressFigures: Encodable {
    private enum Keys: String, CodingKey {
        case unit, fraction, etaSeconds = "eta_s"
        case doneNotifications = "done_notifications", remainingNotifications = "remaining_notifications"
        case totalNotifications = "total_notifications", notificationsPerSecond = "notifications_per_s"
        case doneEntries = "done_entries", remainingEntries = "remaining_entries"
        case totalEntries = "total_entries", entriesPerSecond = "entries_per_s"
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        let rounded = self.rate.map { ($0 * 10).rounded() / 10 }
        func of(_ value: Int?, _ u: CountUnit) -> Int? { unit == u ? value : nil }
        func perSecond(_ u: CountUnit) -> Double? { unit == u ? rounded : nil }
        try c.encode(unit, forKey: .unit)
        try c.encode(of(done, .notifications), forKey: .doneNotifications)
        try c.encode(of(remaining, .notifications), forKey: .remainingNotifications)
        try c.encode(of(total, .notifications), forKey: .totalNotifications)
        try c.encode(perSecond(.notifications), forKey: .notificationsPerSecond)
        try c.encode(of(done, .entries), forKey: .doneEntries)
        try c.encode(of(remaining, .entries), forKey: .remainingEntries)
        try c.encode(of(total, .entries), forKey: .totalEntries)
        try c.encode(perSecond(.entries), forKey: .entriesPerSecond)
        try c.encode(fraction.map { ($0 * 10_000).rounded() / 10_000 }, forKey: .fraction)
        try c.encode(etaSeconds.map { $0.rounded(.up) }, forKey: .etaSeconds)
    }
}
