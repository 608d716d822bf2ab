extension RedisArguments {
    /// Appends the command in RESP (`*<n>\r\n` then `$<len>\r\n<bytes>\r\n` per argument) to
    /// `out`: the request format every Redis speaks (https://redis.io/docs/reference/protocol-spec/).
    /// Written here rather than by hiredis's `redisFormatCommandArgv`, which mallocs a buffer
    /// per command that would then be copied into ours and freed; the tests check both give
    /// the same bytes.
    public func writeRESP(into out: inout [UInt8]) {
        out.reserveCapacity(out.count + bytes.count + 16 * (ends.count + 1))
        Self.writeArrayHeader(count: ends.count, into: &out)
        writeRESPElements(into: &out)
    }

    /// `*<count>\r\n`: the start of a command of `count` arguments.
    static func writeArrayHeader(count: Int, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "*"))
        appendDecimal(count, to: &out)
        out.append(contentsOf: crlf)
    }

    /// `$<len>\r\n<bytes>\r\n` for each argument, without the array header. Written through
    /// raw pointers into room made once: appended piece by piece (five appends and a reversed
    /// slice per argument) this was a tenth of the worker's instructions with single entries.
    func writeRESPElements(into out: inout [UInt8]) {
        // At most: '$', 20 digits, CRLF, the bytes, CRLF.
        let first = out.count
        out.append(contentsOf: repeatElement(0, count: bytes.count + 25 * ends.count))
        var w = first
        out.withUnsafeMutableBufferPointer { o in
            let base = o.baseAddress!
            bytes.withUnsafeBufferPointer { all in
                var start = 0
                for end in ends {
                    base[w] = UInt8(ascii: "$")
                    w = Self.writeDecimal(end - start, at: base, w + 1)
                    base[w] = 13
                    base[w + 1] = 10
                    w += 2
                    if end > start { (base + w).update(from: all.baseAddress! + start, count: end - start) }
                    w += end - start
                    base[w] = 13
                    base[w + 1] = 10
                    w += 2
                    start = end
                }
            }
        }
        out.removeSubrange(w...)
    }

    static let crlf: [UInt8] = [13, 10]

    /// Writes `value` (not negative) in decimal at `at` of `base`; returns where it ends.
    @inline(__always)
    static func writeDecimal(_ value: Int, at base: UnsafeMutablePointer<UInt8>, _ at: Int) -> Int {
        var digits = 1, v = value
        while v >= 10 { v /= 10; digits += 1 }
        v = value
        var i = at + digits
        repeat {
            i -= 1
            base[i] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: v % 10)
            v /= 10
        } while v > 0
        return at + digits
    }

    /// `value` (not negative) in decimal.
    static func appendDecimal(_ value: Int, to out: inout [UInt8]) {
        let start = out.count
        out.append(contentsOf: repeatElement(0, count: 20))
        let end = out.withUnsafeMutableBufferPointer { writeDecimal(value, at: $0.baseAddress!, start) }
        out.removeSubrange(end...)
    }
}
