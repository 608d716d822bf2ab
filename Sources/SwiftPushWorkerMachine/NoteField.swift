#if canImport(Glibc)
import Glibc
#endif

/// The fields a notification is made of, wherever they are written: a single entry's stream
/// fields, a multicast entry's (the same, with `tokens`), or a batch entry's elements and the
/// entry-level defaults beside them (docs/worker.md, "Entries").
enum NoteField: Int, CaseIterable, Sendable {
    case id, app, token, topic, pushType, priority, expiration, collapseID, payload, notAfter, campaign

    /// The field's name, as producers write it.
    var name: StaticString {
        switch self {
        case .id: return "id"
        case .app: return "app"
        case .token: return "token"
        case .topic: return "topic"
        case .pushType: return "push_type"
        case .priority: return "priority"
        case .expiration: return "expiration"
        case .collapseID: return "collapse_id"
        case .payload: return "payload"
        case .notAfter: return "not_after"
        case .campaign: return "campaign"
        }
    }

    /// Every field, made once (`allCases` builds its array at each use: per member of every
    /// batch element).
    static let every = allCases

    /// The field called `name` (raw bytes, as a JSON key or a stream field name has them), or nil
    /// for a name that is not a notification field (producers may add their own: ignored).
    static func named(_ name: UnsafeRawBufferPointer) -> NoteField? {
        for f in every where f.name.utf8CodeUnitCount == name.count {
            if name.isEmpty || memcmp(f.name.utf8Start, name.baseAddress!, name.count) == 0 { return f }
        }
        return nil
    }
}
