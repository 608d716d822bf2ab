/// What a stream entry carries (docs/worker.md, "Entries").
public enum EntryKind: String, Sendable, Equatable {
    /// One notification (format version 1, `v` absent or `1`): `id`, `token`, `payload`...
    case single
    /// One payload to many devices (`v` 2 with `tokens`): each (`id`, token) pair is a
    /// notification.
    case multicast
    /// Many single notifications (`v` 2 with `notifications`, a JSON array of objects): each
    /// element is a notification with its own `id`.
    case batch

    /// The most notifications one multicast or batch entry may carry: a bound on what one
    /// entry's progress record and outcome record hold, and on what a kill can make resend.
    public static let maxNotifications = 1000
}
