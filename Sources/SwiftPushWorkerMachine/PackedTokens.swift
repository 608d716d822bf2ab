/// A multicast entry's `tokens_bin` field (docs/worker.md, "Entries (format version 2)"): the
/// tokens as bytes, each preceded by one byte holding its length. Half the bytes of the text
/// form (33 per 32-byte token against 65), which Redis copies on every step of an entry's way
/// (the producer's `XADD`, the AOF, `XREADGROUP`'s reply): at 500 tokens per entry those bytes
/// were the largest share of Redis's time per notification.
public enum PackedTokens {
    /// Each byte's two lowercase hex digits as they lie in memory (the high digit first), by
    /// the byte's value.
    private static let hexPairs: [UInt16] = (0..<256).map { b in
        func digit(_ v: Int) -> UInt16 { UInt16(v < 10 ? v + 0x30 : v + 0x57) }
        return UInt16(littleEndian: digit(b >> 4) | digit(b & 0x0F) << 8)
    }

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
        // A new storage: the entry's bytes, then the hex, written through raw pointers, two
        // digits at a time from a table (appending byte by byte to the array cost ~40
        // instructions a byte: 1,300 per token of a 500-token entry).
        let old = storage
        let first = old.count
        items.reserveCapacity(count)
        storage = [UInt8](unsafeUninitializedCapacity: first + hexBytes) { out, written in
            let base = out.baseAddress!
            old.withUnsafeBufferPointer { o in
                if first > 0 { base.initialize(from: o.baseAddress!, count: first) }
                Self.hexPairs.withUnsafeBufferPointer { pairs in
                    var at = field.lowerBound, w = first
                    while at < field.upperBound {
                        let n = Int(o[at])
                        let start = w
                        for k in (at + 1)..<(at + 1 + n) {
                            UnsafeMutableRawPointer(base + w).storeBytes(of: pairs[Int(o[k])], as: UInt16.self)
                            w += 2
                        }
                        items.append(start..<w)
                        at += 1 + n
                    }
                }
            }
            written = first + hexBytes
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
