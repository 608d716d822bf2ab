import PushCore

/// Why a notification ended as it did: one of APNs's reasons or one of the library's own
/// (`Tables/reasons.tsv`, the constants below), or a reason APNs sent that is not in the table,
/// with its text kept.
///
/// A struct, not an enum, so that reasons can be added without breaking a `switch`: compare
/// with `==` or match with `case .unregistered:`.
public struct PushReason: Hashable, Sendable, CustomStringConvertible {
    /// The table's entry (`.unknown` for a reason not in the table).
    let code: APNsReason
    /// The text of a reason not in the table (empty otherwise: the table has it).
    private let unknownText: String

    init(_ code: APNsReason) {
        self.code = code
        unknownText = ""
    }

    /// A reason APNs sent that is not in the table, with its text (whatever it says: a server
    /// that sends one of the library's own names, "Timeout", sends an unknown reason).
    init(unknown text: String) {
        code = .unknown
        unknownText = text
    }

    /// A reason for its text as APNs spells it: a reason of the table, or an unknown one that
    /// keeps `text`.
    public init(text: String) {
        code = APNsReason(text: text)
        unknownText = code == .unknown ? text : ""
    }

    /// The reason as APNs (or the library, for its own) spells it: "BadDeviceToken",
    /// "Unregistered", "Timeout"...; an unknown reason's own text.
    public var text: String { code == .unknown ? unknownText : code.text }

    /// Whether the reason is in the library's table (false: APNs sent a reason it does not
    /// know; `text` holds it).
    public var isKnown: Bool { code != .unknown }

    /// The HTTP status APNs answers with for this reason (0 for the library's own reasons and
    /// unknown ones).
    public var httpStatus: Int { Int(code.httpStatus) }

    /// One line describing the reason (the table's).
    public var summary: String { code.summary }

    /// The text.
    public var description: String { text }
}
