/// Base64url without padding (RFC 4648 §5), as JWTs use it (RFC 7515 §2).
public enum Base64URL {
    private static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// Encodes `bytes` as base64url text without `=` padding.
    public static func encode<C: Collection>(_ bytes: C) -> [UInt8] where C.Element == UInt8 {
        var out = [UInt8]()
        out.reserveCapacity((bytes.count * 4 + 2) / 3)
        var it = bytes.makeIterator()
        while let b0 = it.next() {
            let b1 = it.next(), b2 = it.next()
            let n = UInt32(b0) << 16 | UInt32(b1 ?? 0) << 8 | UInt32(b2 ?? 0)
            out.append(alphabet[Int(n >> 18 & 63)])
            out.append(alphabet[Int(n >> 12 & 63)])
            if b1 != nil { out.append(alphabet[Int(n >> 6 & 63)]) }
            if b2 != nil { out.append(alphabet[Int(n & 63)]) }
        }
        return out
    }

    /// Decodes base64url text; nil if any character is outside the base64url alphabet (so `+`
    /// and `/` of standard base64 are refused) or `=` appears anywhere but as trailing padding.
    public static func decode<C: Collection>(_ text: C) -> [UInt8]? where C.Element == UInt8 {
        var out = [UInt8]()
        out.reserveCapacity(text.count * 3 / 4)
        var acc: UInt32 = 0
        var bits = 0
        var padding = false
        for c in text {
            if padding && c != UInt8(ascii: "=") { return nil }
            let v: UInt32
            switch c {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): v = UInt32(c - UInt8(ascii: "A"))
            case UInt8(ascii: "a")...UInt8(ascii: "z"): v = UInt32(c - UInt8(ascii: "a")) + 26
            case UInt8(ascii: "0")...UInt8(ascii: "9"): v = UInt32(c - UInt8(ascii: "0")) + 52
            case UInt8(ascii: "-"): v = 62
            case UInt8(ascii: "_"): v = 63
            case UInt8(ascii: "="): padding = true; continue
            default: return nil
            }
            acc = acc << 6 | v
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: acc >> UInt32(bits)))
            }
        }
        // A single leftover sextet cannot encode a byte: the input was truncated.
        if bits >= 6 { return nil }
        return out
    }
}
