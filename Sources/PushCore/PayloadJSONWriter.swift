/// Writes compact JSON for payloads: objects, strings escaped as RFC 8259 requires, integers,
/// doubles and raw values copied as they are.
///
/// Escaping: `"` and `\`, the control characters below U+0020 (`\b \f \n \r \t`, the others as
/// `\u00XX`) and U+2028/U+2029 (legal in JSON but line terminators in JavaScript, where payloads
/// end up more often than one would think). Every other character stays UTF-8 as it is: APNs
/// counts bytes, and `\uXXXX` would triple the size of non-Latin text.
package struct PayloadJSONWriter {
    package private(set) var bytes: [UInt8] = []
    /// Per open object: whether no member has been written yet.
    private var empty: [Bool] = []

    package init(capacity: Int = 256) { bytes.reserveCapacity(capacity) }

    package mutating func beginObject() {
        bytes.append(UInt8(ascii: "{"))
        empty.append(true)
    }

    package mutating func endObject() {
        bytes.append(UInt8(ascii: "}"))
        empty.removeLast()
    }

    /// Starts a member: a comma when needed, the key and the colon.
    package mutating func key(_ key: String) {
        if empty[empty.count - 1] {
            empty[empty.count - 1] = false
        } else {
            bytes.append(UInt8(ascii: ","))
        }
        string(key)
        bytes.append(UInt8(ascii: ":"))
    }

    package mutating func string(_ value: String) {
        var value = value
        value.withUTF8 { Self.appendString($0, to: &bytes) }
    }

    package mutating func strings(_ values: [String]) {
        bytes.append(UInt8(ascii: "["))
        for (i, v) in values.enumerated() {
            if i > 0 { bytes.append(UInt8(ascii: ",")) }
            string(v)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    package mutating func integer(_ value: Int64) {
        bytes.append(contentsOf: String(value).utf8)
    }

    /// A finite double in Swift's shortest round-trip form ("0.5", "1.0", "1e-05"), which is
    /// valid JSON. Callers check the range first, so NaN and infinities never get here.
    package mutating func double(_ value: Double) {
        precondition(value.isFinite, "JSON has no NaN or infinity")
        bytes.append(contentsOf: (value == 0 ? 0 : value).description.utf8)
    }

    package mutating func raw(_ value: [UInt8]) {
        bytes.append(contentsOf: value)
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    /// Appends `utf8` (valid UTF-8) as a quoted JSON string.
    package static func appendString(_ utf8: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var i = 0
        let n = utf8.count
        while i < n {
            // Runs that need no escaping (nearly every byte of ids, tokens and texts) are copied
            // whole rather than byte by byte.
            var end = i
            while end < n && !needsEscape(utf8[end]) { end += 1 }
            if end > i {
                out.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[i..<end]))
                i = end
                continue
            }
            let c = utf8[i]
            switch c {
            case UInt8(ascii: "\""): out.append(UInt8(ascii: "\\")); out.append(c)
            case UInt8(ascii: "\\"): out.append(UInt8(ascii: "\\")); out.append(c)
            case 0x08: out.append(UInt8(ascii: "\\")); out.append(UInt8(ascii: "b"))
            case 0x0C: out.append(UInt8(ascii: "\\")); out.append(UInt8(ascii: "f"))
            case 0x0A: out.append(UInt8(ascii: "\\")); out.append(UInt8(ascii: "n"))
            case 0x0D: out.append(UInt8(ascii: "\\")); out.append(UInt8(ascii: "r"))
            case 0x09: out.append(UInt8(ascii: "\\")); out.append(UInt8(ascii: "t"))
            case 0x00..<0x20:
                out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                                        hexDigits[Int(c >> 4)], hexDigits[Int(c & 0xF)]])
            case 0xE2 where i + 2 < n && utf8[i + 1] == 0x80 && (utf8[i + 2] == 0xA8 || utf8[i + 2] == 0xA9):
                // U+2028 LINE SEPARATOR, U+2029 PARAGRAPH SEPARATOR
                out.append(contentsOf: Array(#"\u202"#.utf8))
                out.append(utf8[i + 2] == 0xA8 ? UInt8(ascii: "8") : UInt8(ascii: "9"))
                i += 3
                continue
            default:
                out.append(c)
            }
            i += 1
        }
        out.append(UInt8(ascii: "\""))
    }

    /// Whether byte `c` may need escaping: `"`, `\`, a control character, or 0xE2 (which starts
    /// U+2028 and U+2029, escaped, as well as other characters, copied).
    @inline(__always)
    private static func needsEscape(_ c: UInt8) -> Bool {
        c < 0x20 || c == UInt8(ascii: "\"") || c == UInt8(ascii: "\\") || c == 0xE2
    }

    /// The offset of the first byte that is not valid UTF-8, or nil (`UTF8Validation`).
    package static func firstInvalidUTF8(_ bytes: UnsafeRawBufferPointer) -> Int? {
        UTF8Validation.firstInvalid(bytes)
    }
}
