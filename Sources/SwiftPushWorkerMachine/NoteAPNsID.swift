/// A notification's apns-id as the machine holds it: the 128 bits of the name-based UUID
/// `APNsIDNamer` derives from its id. Not the Swift API's `APNsID`: the machine's target
/// reaches neither the Swift API nor OpenSSL (issue 34); the send path hands these bits to the
/// client as an `APNsID` (`SendBatch`).
public struct NoteAPNsID: Sendable, Equatable, CustomStringConvertible {
    /// The UUID's first 8 bytes.
    public let high: UInt64
    /// Its last 8 bytes.
    public let low: UInt64

    /// The id of these bits.
    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// The canonical lowercase text (8-4-4-4-12 hex digits), as APNs writes it and an outcome
    /// record holds it: one allocation, the string's own.
    public var description: String {
        String(unsafeUninitializedCapacity: 36) { out in
            let hex: StaticString = "0123456789abcdef"
            var at = 0
            for digit in 0..<32 {
                if digit == 8 || digit == 12 || digit == 16 || digit == 20 {
                    out[at] = UInt8(ascii: "-")
                    at += 1
                }
                let word = digit < 16 ? high : low
                out[at] = hex.utf8Start[Int(word >> UInt64(60 - 4 * (digit % 16)) & 0xF)]
                at += 1
            }
            return at
        }
    }
}

/// How a notification's apns-id is derived from what its entry says: the same on every
/// resend (docs/worker.md). Given to the machine (`EntryReader`) rather than computed in it: the
/// worker's names are SHA-1 UUIDs (`NameBasedUUID`), and SHA-1 is OpenSSL's, which the
/// machine's target may not reach (scripts/check-pure-targets.py).
public struct APNsIDNamer: Sendable {
    /// A single or batch notification's apns-id, from its id.
    let single: @Sendable (String) -> NoteAPNsID
    /// A multicast notification's, from its id and its device token's bytes.
    let multicast: @Sendable (String, ArraySlice<UInt8>) -> NoteAPNsID

    /// A namer of these two rules.
    public init(single: @escaping @Sendable (String) -> NoteAPNsID,
                multicast: @escaping @Sendable (String, ArraySlice<UInt8>) -> NoteAPNsID) {
        self.single = single
        self.multicast = multicast
    }
}
