/// An `apns-id`: the UUID that names a notification to APNs (a broadcast's
/// `apns-request-id`). Give one to a notification to choose it (the same on every resend of
/// yours: APNs does not deduplicate, but your records can); without one the library makes a
/// random one. Every result carries the notification's.
public struct APNsID: Hashable, Sendable, CustomStringConvertible {
    /// The UUID's 128 bits, the first 8 bytes in `high`.
    public let high: UInt64
    /// The last 8 bytes.
    public let low: UInt64

    /// The id with these bits.
    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// Reads a canonical UUID, 8-4-4-4-12 hex digits in either case; nil for anything else.
    public init?(_ text: String) {
        var copy = text
        guard let id = copy.withUTF8({ APNsID(ascii: UnsafeRawBufferPointer($0)) }) else { return nil }
        self = id
    }

    /// A random (version 4) id.
    public static func random() -> APNsID {
        var g = SystemRandomNumberGenerator()
        let high = g.next() & ~0xF000 | 0x4000
        let low = g.next() & ~(0xC << 60) | (0x8 << 60)
        return APNsID(high: high, low: low)
    }

    /// The id from its 36 ASCII characters; nil when they are not a canonical UUID.
    init?(ascii: UnsafeRawBufferPointer) {
        guard ascii.count == 36 else { return nil }
        var high: UInt64 = 0, low: UInt64 = 0, digits = 0
        for i in 0..<36 {
            let c = ascii[i]
            if i == 8 || i == 13 || i == 18 || i == 23 {
                guard c == UInt8(ascii: "-") else { return nil }
                continue
            }
            let v: UInt8
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): v = c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): v = c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): v = c - UInt8(ascii: "A") + 10
            default: return nil
            }
            if digits < 16 { high = high << 4 | UInt64(v) } else { low = low << 4 | UInt64(v) }
            digits += 1
        }
        self.init(high: high, low: low)
    }

    /// The id the library wrote into a result (36 hex digits and dashes, checked when they
    /// were given or generated there): decoded without checks, a few instructions a digit
    /// (every result has one). Empty (no buffer) gives the zero id.
    init(trustedASCII ascii: UnsafeRawBufferPointer) {
        guard ascii.count == 36 else {
            self.init(high: 0, low: 0)
            return
        }
        // '0'-'9' are 0x30-0x39, 'a'-'f' 0x61-0x66, 'A'-'F' 0x41-0x46: the low nibble, plus 9
        // for letters (bit 6 set).
        @inline(__always) func nibble(_ c: UInt8) -> UInt64 { UInt64((c & 0xF) &+ 9 &* (c >> 6)) }
        var high: UInt64 = 0, low: UInt64 = 0
        for i in 0..<8 { high = high << 4 | nibble(ascii[i]) }
        for i in 9..<13 { high = high << 4 | nibble(ascii[i]) }
        for i in 14..<18 { high = high << 4 | nibble(ascii[i]) }
        for i in 19..<23 { low = low << 4 | nibble(ascii[i]) }
        for i in 24..<36 { low = low << 4 | nibble(ascii[i]) }
        self.init(high: high, low: low)
    }

    /// Calls `body` with the id's 36 lowercase ASCII characters.
    func withASCII<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        var text: (UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0) // 40 bytes of room
        return withUnsafeMutableBytes(of: &text) { out in
            let hex: StaticString = "0123456789abcdef"
            var at = 0
            for digit in 0..<32 {
                if digit == 8 || digit == 12 || digit == 16 || digit == 20 {
                    out[at] = UInt8(ascii: "-")
                    at += 1
                }
                let word = digit < 16 ? high : low
                let nibble = Int(word >> UInt64(60 - 4 * (digit % 16)) & 0xF)
                out[at] = hex.utf8Start[nibble]
                at += 1
            }
            return body(UnsafeRawBufferPointer(rebasing: out[0..<36]))
        }
    }

    /// The canonical lowercase form, as APNs writes it.
    public var description: String {
        withASCII { String(decoding: $0, as: UTF8.self) }
    }
}
