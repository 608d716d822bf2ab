/// The one UTF-8 check of the library (the JSON reader and the payload builder both use it):
/// overlong forms, surrogates (U+D800–U+DFFF) and code points above U+10FFFF are invalid, as in
/// RFC 3629's table of well-formed byte sequences.
public enum UTF8Validation {
    /// Checks the multi-byte sequence starting at `i` (whose byte is 0x80 or above): `.success`
    /// with its length (2–4) when well-formed, else `.failure` with the offset of the first byte
    /// that breaks it (`i` for a bad lead byte; `bytes.count` when it is cut short).
    @inline(__always)
    public static func sequence(_ bytes: UnsafeRawBufferPointer, at i: Int) -> Result<Int, Offending> {
        var need: Int
        var lo: UInt8 = 0x80, hi: UInt8 = 0xBF
        switch bytes[i] {
        case 0xC2...0xDF: need = 1
        case 0xE0: need = 2; lo = 0xA0
        case 0xE1...0xEC, 0xEE, 0xEF: need = 2
        case 0xED: need = 2; hi = 0x9F
        case 0xF0: need = 3; lo = 0x90
        case 0xF1...0xF3: need = 3
        case 0xF4: need = 3; hi = 0x8F
        default: return .failure(Offending(offset: i))
        }
        let length = need + 1
        var k = i + 1
        while need > 0 {
            guard k < bytes.count, bytes[k] >= lo, bytes[k] <= hi else { return .failure(Offending(offset: k)) }
            lo = 0x80
            hi = 0xBF
            k += 1
            need -= 1
        }
        return .success(length)
    }

    /// Where a sequence stopped being UTF-8.
    public struct Offending: Error, Equatable {
        public let offset: Int
    }

    /// The offset of the first byte that does not start a well-formed sequence, or nil when all
    /// of `bytes` is valid UTF-8.
    public static func firstInvalid(_ bytes: UnsafeRawBufferPointer) -> Int? {
        var i = 0
        while i < bytes.count {
            if bytes[i] < 0x80 { i += 1; continue }
            guard case .success(let n) = sequence(bytes, at: i) else { return i }
            i += n
        }
        return nil
    }
}
