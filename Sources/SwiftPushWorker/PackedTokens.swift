/// A multicast entry's `tokens_bin` field (docs/worker.md, "Entries (format version 2)"): the
/// tokens as bytes, each preceded by one byte holding its length. Half the bytes of the text
/// form (33 per 32-byte token against 65), which Redis copies on every step of an entry's way
/// (the producer's `XADD`, the AOF, `XREADGROUP`'s reply): at 500 tokens per entry those bytes
/// were the largest share of Redis's time per notification.
public enum PackedTokens {
    /// The lowercase hex digit of `v` (0-15).
    @inline(__always)
    private static func digit(_ v: UInt8) -> UInt8 { v < 10 ? v &+ 0x30 : v &+ 0x57 }

    /// Why a packed field cannot be read: it ends in the middle of a token.
    struct Truncated: Error {
        /// Tokens read whole before the cut.
        let complete: Int
        /// Where the cut token starts, from the field's start.
        let offset: Int
    }

    /// Appends each token of the packed field at `field` of `storage` to `storage` as lowercase
    /// hex (the form the rest of the worker, the apns-id and the outcome records use: the text
    /// form of the same tokens reads the same); returns their ranges, in order.
    static func unpack(_ field: Range<Int>, storage: inout [UInt8]) -> Result<[Range<Int>], Truncated> {
        var items: [Range<Int>] = []
        var at = field.lowerBound
        var hexBytes = 0, count = 0
        while at < field.upperBound {
            let n = Int(storage[at])
            guard at + 1 + n <= field.upperBound else { return .failure(Truncated(complete: count, offset: at - field.lowerBound)) }
            hexBytes += 2 * n
            count += 1
            at += 1 + n
        }
        // Written through raw pointers: appending byte by byte to the array cost ~40
        // instructions a byte (a 500-token entry: 1,300 instructions per token).
        let start = storage.count
        storage.append(contentsOf: repeatElement(0, count: hexBytes))
        items.reserveCapacity(count)
        storage.withUnsafeMutableBufferPointer { b in
            let base = b.baseAddress!
            var at = field.lowerBound, out = start
            while at < field.upperBound {
                let n = Int(base[at])
                let first = out
                for k in (at + 1)..<(at + 1 + n) {
                    let byte = base[k]
                    base[out] = Self.digit(byte >> 4)
                    base[out + 1] = Self.digit(byte & 0x0F)
                    out += 2
                }
                items.append(first..<out)
                at += 1 + n
            }
        }
        return .success(items)
    }

    /// `tokens` packed, when every one is lowercase hex of an even length up to 510 digits (so
    /// that the worker reads back exactly the text given: the apns-id and the outcome records
    /// name the token as written); nil otherwise (write the text form).
    public static func pack(_ tokens: some Collection<some StringProtocol>) -> [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(tokens.count * 33)
        for t in tokens {
            let u = t.utf8
            guard !u.isEmpty, u.count % 2 == 0, u.count <= 510 else { return nil }
            out.append(UInt8(u.count / 2))
            var high: UInt8?
            for c in u {
                let v: UInt8
                switch c {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): v = c - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): v = c - UInt8(ascii: "a") + 10
                default: return nil
                }
                if let h = high { out.append(h << 4 | v); high = nil } else { high = v }
            }
        }
        return out
    }
}
