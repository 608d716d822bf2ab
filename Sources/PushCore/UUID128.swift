/// A UUID's 128 bits and its canonical text: what an apns-id (a broadcast's apns-request-id) is.
/// The one value of it in the package: the Swift API's `APNsID` is this type, the worker's
/// machine holds one per notification (`WorkNote.apnsID`), and the client's generator writes its
/// random ids with its writer (`UUIDGenerator`). Here in PushCore because the worker's machine
/// reaches neither the Swift API nor OpenSSL (scripts/check-pure-targets.py; issue 34).
public struct UUID128: Hashable, Sendable, CustomStringConvertible {
    /// The UUID's 128 bits, the first 8 bytes in `high`.
    public let high: UInt64
    /// The last 8 bytes.
    public let low: UInt64

    /// The id with these bits.
    @inlinable
    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// Reads a canonical UUID, 8-4-4-4-12 hex digits in either case; nil for anything else.
    public init?(_ text: String) {
        var copy = text
        guard let id = copy.withUTF8({ UUID128(ascii: UnsafeRawBufferPointer($0)) }) else { return nil }
        self = id
    }

    /// A random (version 4) id.
    public static func random() -> UUID128 {
        var g = SystemRandomNumberGenerator()
        let high = g.next() & ~0xF000 | 0x4000
        let low = g.next() & ~(0xC << 60) | (0x8 << 60)
        return UUID128(high: high, low: low)
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
    /// were given or generated there): decoded without checks, eight or four digits at a time
    /// (every result has one). Anything but 36 bytes gives the zero id. Inlinable: the Swift
    /// API decodes every result's id with it, from another module.
    @inlinable
    package init(trustedASCII ascii: UnsafeRawBufferPointer) {
        guard ascii.count == 36, let base = ascii.baseAddress else {
            self.init(high: 0, low: 0)
            return
        }
        // 8-4-4-4-12: digits at 0, 9, 14, 19, 24 and 28.
        let high = UInt64(Self.hex8(base, 0)) << 32 | UInt64(Self.hex4(base, 9)) << 16 | UInt64(Self.hex4(base, 14))
        let low = UInt64(Self.hex4(base, 19)) << 48 | UInt64(Self.hex4(base, 24)) << 32 | UInt64(Self.hex8(base, 28))
        self.init(high: high, low: low)
    }

    /// The value of 8 hex digits at `offset`. Each byte becomes its digit's value ('0'-'9' are
    /// 0x30-0x39, letters 0x41-0x46 and 0x61-0x66: the low nibble, plus 9 when bit 6 is set),
    /// then the nibbles are packed pairwise and the bytes put in reading order.
    @inlinable @inline(__always)
    static func hex8(_ base: UnsafeRawPointer, _ offset: Int) -> UInt32 {
        let v = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
        var n = (v & 0x0F0F_0F0F_0F0F_0F0F) &+ 9 &* ((v >> 6) & 0x0101_0101_0101_0101)
        n = ((n << 4) | (n >> 8)) & 0x00FF_00FF_00FF_00FF
        n = (n | (n >> 8)) & 0x0000_FFFF_0000_FFFF
        n = (n | (n >> 16)) & 0xFFFF_FFFF
        return UInt32(truncatingIfNeeded: n).byteSwapped
    }

    /// The value of 4 hex digits at `offset` (as `hex8`).
    @inlinable @inline(__always)
    static func hex4(_ base: UnsafeRawPointer, _ offset: Int) -> UInt16 {
        let v = UInt32(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
        var n = (v & 0x0F0F_0F0F) &+ 9 &* ((v >> 6) & 0x0101_0101)
        n = ((n << 4) | (n >> 8)) & 0x00FF_00FF
        n = (n | (n >> 8)) & 0xFFFF
        return UInt16(truncatingIfNeeded: n).byteSwapped
    }

    /// Writes the id's 36 lowercase ASCII characters (8-4-4-4-12 hex digits, as APNs writes
    /// them) at `out`: the one text writer of a UUID in the package. Inlinable: the send paths
    /// of the client (a random id per notification), the Swift API and the worker (a given one)
    /// call it from other modules, once per notification.
    @inlinable
    package func write(to out: UnsafeMutableRawPointer) {
        let hex: StaticString = "0123456789abcdef"
        var at = 0
        for digit in 0..<32 {
            if digit == 8 || digit == 12 || digit == 16 || digit == 20 {
                out.storeBytes(of: UInt8(ascii: "-"), toByteOffset: at, as: UInt8.self)
                at += 1
            }
            let word = digit < 16 ? high : low
            let nibble = Int(word >> UInt64(60 - 4 * (digit % 16)) & 0xF)
            out.storeBytes(of: hex.utf8Start[nibble], toByteOffset: at, as: UInt8.self)
            at += 1
        }
    }

    /// Calls `body` with the id's 36 lowercase ASCII characters (no String made: the worker
    /// and the Swift API hand them to the send path for every notification they name).
    @inlinable
    package func withASCII<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        var text: (UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0) // 40 bytes of room
        return withUnsafeMutableBytes(of: &text) { out in
            write(to: out.baseAddress!)
            return body(UnsafeRawBufferPointer(rebasing: out[0..<36]))
        }
    }

    /// The canonical lowercase form, as APNs writes it and an outcome record holds it: one
    /// allocation, the string's own.
    public var description: String {
        String(unsafeUninitializedCapacity: 36) { out in
            write(to: out.baseAddress!)
            return 36
        }
    }
}
