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

    /// `$<len>\r\n<bytes>\r\n` for each argument, without the array header.
    func writeRESPElements(into out: inout [UInt8]) {
        var start = 0
        bytes.withUnsafeBufferPointer { all in
            for end in ends {
                out.append(UInt8(ascii: "$"))
                Self.appendDecimal(end - start, to: &out)
                out.append(contentsOf: Self.crlf)
                out.append(contentsOf: UnsafeBufferPointer(rebasing: all[start..<end]))
                out.append(contentsOf: Self.crlf)
                start = end
            }
        }
    }

    static let crlf: [UInt8] = [13, 10]

    /// `value` (not negative) in decimal.
    static func appendDecimal(_ value: Int, to out: inout [UInt8]) {
        let start = out.count
        var v = value
        repeat {
            out.append(UInt8(ascii: "0") + UInt8(v % 10))
            v /= 10
        } while v > 0
        out[start...].reverse()
    }
}
