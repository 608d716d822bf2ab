/// A Redis stream entry id, `<ms>-<seq>`, ordered as Redis orders them (by time, then
/// sequence), so that two ids compare as numbers rather than as text.
public struct StreamID: Comparable, Hashable, Sendable, CustomStringConvertible {
    /// The milliseconds part.
    public let millis: UInt64
    /// The sequence part.
    public let sequence: UInt64

    /// The id `<millis>-<sequence>`.
    public init(millis: UInt64, sequence: UInt64) {
        self.millis = millis
        self.sequence = sequence
    }

    /// Parses `<ms>-<seq>`; nil for anything else.
    public init?(_ text: String) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, let ms = UInt64(parts[0]), let seq = UInt64(parts[1]) else { return nil }
        millis = ms
        sequence = seq
    }

    public static func < (a: StreamID, b: StreamID) -> Bool { (a.millis, a.sequence) < (b.millis, b.sequence) }

    public var description: String { "\(millis)-\(sequence)" }
}
