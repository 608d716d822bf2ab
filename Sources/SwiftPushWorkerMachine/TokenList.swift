#if canImport(Glibc)
import Glibc
#endif

/// A multicast entry's tokens read in place: the text form (`tokens`: hex tokens separated by
/// commas, spaces around them ignored) or the packed form (`tokens_bin`, `PackedTokens`), each
/// distinct token once, in the order first listed. A token listed again (byte for byte) is one
/// notification: sent once, one outcome; the record counts the repeats.
struct TokenList {
    /// How many tokens the field lists (repeats and empty items included).
    let listed: Int
    /// Each distinct token's bytes in the entry's storage, in the order first listed.
    let distinct: [Range<Int>]

    /// Reads the tokens of the text field at `field` of `storage`.
    init(_ field: Range<Int>, in storage: [UInt8]) {
        var items: [Range<Int>] = []
        storage.withUnsafeBufferPointer { b in
            guard !field.isEmpty else { return }
            var start = field.lowerBound
            while true {
                var end = start
                while end < field.upperBound && b[end] != UInt8(ascii: ",") { end += 1 }
                var lo = start, hi = end
                while lo < hi && b[lo] == 0x20 { lo += 1 }
                while hi > lo && b[hi - 1] == 0x20 { hi -= 1 }
                items.append(lo..<hi)
                if end == field.upperBound { break }
                start = end + 1
            }
        }
        self.init(items: items, in: storage)
    }

    /// The tokens at `items` of `storage`, in order (repeats found and dropped).
    init(items: [Range<Int>], in storage: [UInt8]) {
        listed = items.count
        // Repeats found by sorting positions by their bytes and comparing neighbours: no copy
        // of a token, no hashing.
        let order = storage.withUnsafeBufferPointer { b in
            items.indices.sorted { i, j in Self.compare(b, items[i], items[j]) < 0 || (Self.compare(b, items[i], items[j]) == 0 && i < j) }
        }
        var repeated = [Bool](repeating: false, count: items.count)
        storage.withUnsafeBufferPointer { b in
            for k in order.indices.dropFirst() where Self.compare(b, items[order[k - 1]], items[order[k]]) == 0 {
                repeated[order[k]] = true
            }
        }
        distinct = items.indices.filter { !repeated[$0] }.map { items[$0] }
    }

    /// memcmp order of two ranges of `b` (a shorter prefix first).
    private static func compare(_ b: UnsafeBufferPointer<UInt8>, _ x: Range<Int>, _ y: Range<Int>) -> Int32 {
        let n = min(x.count, y.count)
        if n > 0 {
            let c = memcmp(b.baseAddress! + x.lowerBound, b.baseAddress! + y.lowerBound, n)
            if c != 0 { return c }
        }
        return x.count == y.count ? 0 : (x.count < y.count ? -1 : 1)
    }
}
