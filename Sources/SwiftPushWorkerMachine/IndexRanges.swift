/// Notification indexes of an entry written as ranges (`"0-199,250,260-499"`), as the outcome
/// records give which notifications a group covers: short for the common case (everything, one
/// range) and exact for any other.
package enum IndexRanges {
    /// `indexes` (ascending) as ranges. Inlinable, as `bitmap`: the settle's arguments are
    /// written in another module (`RedisSettleArguments`), and a generic function called from
    /// there would otherwise run unspecialized.
    @inlinable
    package static func text(_ indexes: some Sequence<Int>) -> String {
        var out = ""
        var start = -2, last = -2
        func close() {
            guard start >= 0 else { return }
            if !out.isEmpty { out += "," }
            out += start == last ? String(start) : "\(start)-\(last)"
        }
        for i in indexes {
            if i == last + 1 { last = i; continue }
            close()
            start = i
            last = i
        }
        close()
        return out
    }

    /// The indexes of ranges `text` (ascending as written), nil when it is not ranges.
    package static func indexes(_ text: String) -> [Int]? {
        if text.isEmpty { return [] }
        var out: [Int] = []
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            let bounds = part.split(separator: "-", omittingEmptySubsequences: false)
            guard bounds.count <= 2, let lo = Int(bounds[0]), let hi = bounds.count == 2 ? Int(bounds[1]) : lo,
                  lo >= 0, hi >= lo, hi - lo < 1 << 20 else { return nil }
            out.append(contentsOf: lo...hi)
        }
        return out
    }
}
