/// A small, strict JSON reader (RFC 8259) over bytes, with no Foundation and no allocation
/// while validating.
///
/// The library needs three things from JSON, all on small documents: check that a payload is
/// well-formed UTF-8 JSON before sending it, read `reason`/`timestamp` from APNs error bodies
/// and GOAWAY debug data, and read JWT headers and claims (the mock). A full DOM would be
/// wasted work, so this reader validates and reports where each top-level member's value is.
public enum JSON {
    /// The deepest nesting accepted; deeper documents are rejected rather than recursed into.
    public static let maxDepth = 64

    /// A validation failure: what was wrong and at which byte offset.
    public struct Failure: Error, Equatable, Sendable {
        /// What was wrong, e.g. "invalid UTF-8".
        public let message: String
        /// Byte offset of the failure.
        public let offset: Int
    }

    /// A top-level member of an object: its key (unescaped) and the byte range of its raw value.
    public struct Member: Sendable {
        /// The member's key, unescaped.
        public let key: String
        /// Byte range of the raw value within the document.
        public let value: Range<Int>
    }

    /// Checks that `bytes` hold exactly one well-formed JSON value (surrounding whitespace
    /// allowed) in valid UTF-8.
    public static func validate(_ bytes: UnsafeRawBufferPointer) -> Failure? {
        var r = Reader(bytes: bytes)
        do {
            r.skipSpace()
            try r.value(depth: 0, members: nil)
            r.skipSpace()
            if r.pos != bytes.count { throw r.fail("trailing characters after the JSON value") }
            return nil
        } catch let f as Failure {
            return f
        } catch {
            return Failure(message: "invalid JSON", offset: 0)
        }
    }

    /// Validates `bytes` as one JSON object and returns its top-level members in order.
    public static func topLevelMembers(_ bytes: UnsafeRawBufferPointer) -> Result<[Member], Failure> {
        var r = Reader(bytes: bytes)
        var members: [Member] = []
        do {
            r.skipSpace()
            guard r.peek() == UInt8(ascii: "{") else { throw r.fail("expected a JSON object") }
            try r.value(depth: 0, members: &members)
            r.skipSpace()
            if r.pos != bytes.count { throw r.fail("trailing characters after the JSON value") }
            return .success(members)
        } catch let f as Failure {
            return .failure(f)
        } catch {
            return .failure(Failure(message: "invalid JSON", offset: 0))
        }
    }

    /// Convenience over `[UInt8]`.
    public static func topLevelMembers(_ bytes: [UInt8]) -> Result<[Member], Failure> {
        bytes.withUnsafeBytes { topLevelMembers($0) }
    }

    /// Decodes a raw JSON string value (with its quotes) into a Swift string; nil if `raw` is not
    /// a string.
    public static func decodeString(_ raw: UnsafeRawBufferPointer) -> String? {
        guard raw.count >= 2, raw[0] == UInt8(ascii: "\""), raw[raw.count - 1] == UInt8(ascii: "\"") else { return nil }
        var out = [UInt8]()
        out.reserveCapacity(raw.count)
        var i = 1
        let end = raw.count - 1
        while i < end {
            let c = raw[i]
            if c != UInt8(ascii: "\\") {
                out.append(c)
                i += 1
                continue
            }
            guard i + 1 < end else { return nil }
            let e = raw[i + 1]
            i += 2
            switch e {
            case UInt8(ascii: "\""): out.append(0x22)
            case UInt8(ascii: "\\"): out.append(0x5C)
            case UInt8(ascii: "/"): out.append(0x2F)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                guard i + 4 <= end, var scalar = hex4(raw, i) else { return nil }
                i += 4
                if (0xD800..<0xDC00).contains(scalar), i + 6 <= end, raw[i] == UInt8(ascii: "\\"),
                   raw[i + 1] == UInt8(ascii: "u"), let low = hex4(raw, i + 2), (0xDC00..<0xE000).contains(low) {
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    i += 6
                }
                let s = Unicode.Scalar(scalar) ?? "\u{FFFD}"
                out.append(contentsOf: Array(String(Character(s)).utf8))
            default: return nil
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Reads a raw JSON number as an Int64 if it is an integer in range.
    public static func decodeInt64(_ raw: UnsafeRawBufferPointer) -> Int64? {
        guard !raw.isEmpty else { return nil }
        var i = 0
        var negative = false
        if raw[0] == UInt8(ascii: "-") { negative = true; i = 1 }
        guard i < raw.count else { return nil }
        // Accumulate towards the sign so that Int64.min, whose magnitude has no positive
        // Int64, is read too.
        var v: Int64 = 0
        while i < raw.count {
            let c = raw[i]
            guard c >= 0x30, c <= 0x39 else { return nil }
            let digit = Int64(c - 0x30)
            let (m, o1) = v.multipliedReportingOverflow(by: 10)
            let (a, o2) = negative ? m.subtractingReportingOverflow(digit) : m.addingReportingOverflow(digit)
            if o1 || o2 { return nil }
            v = a
            i += 1
        }
        return v
    }

    private static func hex4(_ raw: UnsafeRawBufferPointer, _ at: Int) -> UInt32? {
        var v: UInt32 = 0
        for k in 0..<4 {
            guard let d = hexValue(raw[at + k]) else { return nil }
            v = v << 4 | UInt32(d)
        }
        return v
    }

    /// Whether any of the 8 bytes in `w` may need a look of its own inside a string: a quote,
    /// a backslash, a control character (< 0x20) or a non-ASCII byte. Never false for such a
    /// word (the SWAR tests below have no false negatives); rarely true for a plain one, which
    /// only costs the byte-by-byte path.
    @inline(__always)
    static func mayHoldSpecialByte(_ w: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let high: UInt64 = 0x8080_8080_8080_8080
        @inline(__always) func hasZeroByte(_ x: UInt64) -> UInt64 { (x &- ones) & ~x & high }
        let belowSpace = (w &- ones &* 0x20) & ~w & high
        return (w & high) | belowSpace | hasZeroByte(w ^ (ones &* 0x22)) | hasZeroByte(w ^ (ones &* 0x5C)) != 0
    }

    /// The value of a hex digit, or nil.
    @inline(__always)
    public static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: return c - 0x30
        case 0x61...0x66: return c - 0x61 + 10
        case 0x41...0x46: return c - 0x41 + 10
        default: return nil
        }
    }

    /// The recursive-descent reader. `members` collects the top-level object's members when
    /// given (depth 0 only).
    private struct Reader {
        let bytes: UnsafeRawBufferPointer
        var pos = 0

        init(bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

        func fail(_ message: String) -> Failure { Failure(message: message, offset: pos) }

        @inline(__always) func peek() -> UInt8? { pos < bytes.count ? bytes[pos] : nil }

        mutating func skipSpace() {
            while pos < bytes.count {
                switch bytes[pos] {
                case 0x20, 0x09, 0x0A, 0x0D: pos += 1
                default: return
                }
            }
        }

        mutating func value(depth: Int, members: UnsafeMutablePointer<[Member]>?) throws {
            guard let c = peek() else { throw fail("unexpected end of JSON") }
            switch c {
            case UInt8(ascii: "{"): try object(depth: depth + 1, members: members)
            case UInt8(ascii: "["): try array(depth: depth + 1)
            case UInt8(ascii: "\""): try string()
            case UInt8(ascii: "t"): try literal("true")
            case UInt8(ascii: "f"): try literal("false")
            case UInt8(ascii: "n"): try literal("null")
            case UInt8(ascii: "-"), 0x30...0x39: try number()
            default: throw fail("unexpected character in JSON")
            }
        }

        mutating func value(depth: Int, members: inout [Member]) throws {
            try withUnsafeMutablePointer(to: &members) { try value(depth: depth, members: $0) }
        }

        mutating func object(depth: Int, members: UnsafeMutablePointer<[Member]>?) throws {
            guard depth <= JSON.maxDepth else { throw fail("JSON nested too deeply") }
            pos += 1
            skipSpace()
            if peek() == UInt8(ascii: "}") { pos += 1; return }
            while true {
                skipSpace()
                guard peek() == UInt8(ascii: "\"") else { throw fail("expected a string key") }
                let keyStart = pos
                try string()
                let keyEnd = pos
                skipSpace()
                guard peek() == UInt8(ascii: ":") else { throw fail("expected ':' after a key") }
                pos += 1
                skipSpace()
                let valueStart = pos
                try value(depth: depth, members: nil)
                if let members {
                    let key = JSON.decodeString(UnsafeRawBufferPointer(rebasing: bytes[keyStart..<keyEnd])) ?? ""
                    members.pointee.append(Member(key: key, value: valueStart..<pos))
                }
                skipSpace()
                guard let c = peek() else { throw fail("unexpected end of JSON in an object") }
                pos += 1
                if c == UInt8(ascii: "}") { return }
                if c != UInt8(ascii: ",") { pos -= 1; throw fail("expected ',' or '}' in an object") }
            }
        }

        mutating func array(depth: Int) throws {
            guard depth <= JSON.maxDepth else { throw fail("JSON nested too deeply") }
            pos += 1
            skipSpace()
            if peek() == UInt8(ascii: "]") { pos += 1; return }
            while true {
                skipSpace()
                try value(depth: depth, members: nil)
                skipSpace()
                guard let c = peek() else { throw fail("unexpected end of JSON in an array") }
                pos += 1
                if c == UInt8(ascii: "]") { return }
                if c != UInt8(ascii: ",") { pos -= 1; throw fail("expected ',' or ']' in an array") }
            }
        }

        mutating func literal(_ word: StaticString) throws {
            let n = word.utf8CodeUnitCount
            guard pos + n <= bytes.count else { throw fail("invalid literal") }
            let w = word.utf8Start
            for k in 0..<n where bytes[pos + k] != w[k] { throw fail("invalid literal") }
            pos += n
        }

        mutating func number() throws {
            if peek() == UInt8(ascii: "-") { pos += 1 }
            guard let d = peek(), d >= 0x30, d <= 0x39 else { throw fail("invalid number") }
            if d == 0x30 { pos += 1 } else { digits() }
            if peek() == UInt8(ascii: ".") {
                pos += 1
                guard let f = peek(), f >= 0x30, f <= 0x39 else { throw fail("invalid number") }
                digits()
            }
            if let e = peek(), e == UInt8(ascii: "e") || e == UInt8(ascii: "E") {
                pos += 1
                if let s = peek(), s == UInt8(ascii: "+") || s == UInt8(ascii: "-") { pos += 1 }
                guard let f = peek(), f >= 0x30, f <= 0x39 else { throw fail("invalid number") }
                digits()
            }
        }

        mutating func digits() {
            while let c = peek(), c >= 0x30, c <= 0x39 { pos += 1 }
        }

        /// A string, checking escapes and that every byte sequence is valid UTF-8 (no overlongs,
        /// no surrogates, nothing above U+10FFFF) and that no control character is unescaped.
        mutating func string() throws {
            pos += 1
            while pos < bytes.count {
                // Runs of plain ASCII, 8 bytes at a time: payload text is mostly that, and this
                // check runs on every notification sent.
                while pos + 8 <= bytes.count && !JSON.mayHoldSpecialByte(bytes.loadUnaligned(fromByteOffset: pos, as: UInt64.self)) {
                    pos += 8
                }
                guard pos < bytes.count else { break }
                let c = bytes[pos]
                if c == UInt8(ascii: "\"") { pos += 1; return }
                if c == UInt8(ascii: "\\") {
                    pos += 1
                    guard let e = peek() else { break }
                    switch e {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"),
                         UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                        pos += 1
                    case UInt8(ascii: "u"):
                        guard pos + 4 < bytes.count else { throw fail("invalid \\u escape") }
                        for k in 1...4 where JSON.hexValue(bytes[pos + k]) == nil { throw fail("invalid \\u escape") }
                        pos += 5
                    default: throw fail("invalid escape in a string")
                    }
                    continue
                }
                if c < 0x20 { throw fail("unescaped control character in a string") }
                if c < 0x80 { pos += 1; continue }
                try utf8Sequence(lead: c)
            }
            throw fail("unterminated string")
        }

        /// Steps over the multi-byte sequence at `pos` (its lead byte is `lead`, 0x80 or above).
        mutating func utf8Sequence(lead: UInt8) throws {
            switch UTF8Validation.sequence(bytes, at: pos) {
            case .success(let n): pos += n
            case .failure(let bad):
                pos = bad.offset
                throw fail("invalid UTF-8")
            }
        }
    }
}
