import PushCore

/// Reads a batch entry's `notifications` field — a JSON array of objects, one per notification —
/// in place: it finds each element's members and where their values lie, and copies nothing.
/// A payload is handed on as the slice of the entry it is written in (the client checks it when
/// it is sent, once), so a batch costs one pass over its bytes.
///
/// Strict where it matters to find the members (the array, the objects, the strings, the
/// nesting); a value it only skips (a payload object, an unknown member) is checked for balance,
/// not for every rule of JSON: the client validates every payload before sending it.
struct BatchScanner {
    /// One member of an element.
    struct Member: Equatable {
        /// The notification field it sets, nil for a name that is none (ignored).
        let field: NoteField?
        /// The value's bytes in the entry: a string's with its quotes, anything else as written.
        let value: Range<Int>
        /// Whether the value is a JSON string.
        let isString: Bool
        /// Whether that string holds an escape (its text must be decoded, not sliced).
        let escaped: Bool
    }

    /// The elements read: element `i`'s members are `members[elementStarts[i]..<elementStarts[i + 1]]`
    /// (the last one's run to the end).
    struct Elements {
        var members: [Member] = []
        var elementStarts: [Int] = []
        /// Each element's whole object in the entry (what a 429 moves to a delayed entry).
        var objects: [Range<Int>] = []

        /// How many elements there are.
        var count: Int { elementStarts.count }

        /// Element `i`'s members.
        func element(_ i: Int) -> ArraySlice<Member> {
            members[elementStarts[i]..<(i + 1 < elementStarts.count ? elementStarts[i + 1] : members.count)]
        }
    }

    /// Why the array could not be read: what was wrong and where (an offset in the field).
    struct Failure: Error, Equatable {
        let message: String
        let offset: Int
    }

    private let bytes: UnsafeRawBufferPointer
    /// The field's offset in the entry's storage (ranges are given in the storage).
    private let base: Int
    private var pos = 0

    private init(bytes: UnsafeRawBufferPointer, base: Int) {
        self.bytes = bytes
        self.base = base
    }

    /// The elements of `bytes` (the field's value; it starts at offset `base` of the entry's
    /// storage), or why they cannot be read. At most `maxElements` are accepted.
    static func scan(_ bytes: UnsafeRawBufferPointer, base: Int, maxElements: Int) -> Result<Elements, Failure> {
        var s = BatchScanner(bytes: bytes, base: base)
        do throws(Failure) {
            return .success(try s.array(maxElements: maxElements))
        } catch {
            return .failure(error)
        }
    }

    private func fail(_ message: String) -> Failure { Failure(message: message, offset: pos) }

    private mutating func skipSpace() {
        while pos < bytes.count, bytes[pos] == 0x20 || bytes[pos] == 0x0A || bytes[pos] == 0x0D || bytes[pos] == 0x09 { pos += 1 }
    }

    private mutating func expect(_ c: UInt8, _ what: String) throws(Failure) {
        skipSpace()
        guard pos < bytes.count, bytes[pos] == c else { throw fail("expected \(what)") }
        pos += 1
    }

    private mutating func array(maxElements: Int) throws(Failure) -> Elements {
        var out = Elements()
        try expect(UInt8(ascii: "["), "a JSON array of notifications")
        skipSpace()
        if pos < bytes.count, bytes[pos] == UInt8(ascii: "]") {
            pos += 1
        } else {
            while true {
                guard out.count < maxElements else { throw fail("more than \(maxElements) notifications") }
                out.elementStarts.append(out.members.count)
                skipSpace()
                let start = pos
                try object(into: &out.members)
                out.objects.append((base + start)..<(base + pos))
                skipSpace()
                guard pos < bytes.count else { throw fail("unexpected end of the array") }
                pos += 1
                if bytes[pos - 1] == UInt8(ascii: "]") { break }
                guard bytes[pos - 1] == UInt8(ascii: ",") else { pos -= 1; throw fail("expected ',' or ']' between notifications") }
            }
        }
        skipSpace()
        guard pos == bytes.count else { throw fail("trailing characters after the array") }
        return out
    }

    private mutating func object(into members: inout [Member]) throws(Failure) {
        try expect(UInt8(ascii: "{"), "a JSON object for each notification")
        skipSpace()
        if pos < bytes.count, bytes[pos] == UInt8(ascii: "}") { pos += 1; return }
        while true {
            skipSpace()
            let keyStart = pos
            let keyEscaped = try string()
            let field: NoteField?
            if keyEscaped {
                let key = UnsafeRawBufferPointer(rebasing: bytes[keyStart..<pos])
                field = JSON.decodeString(key).flatMap { name in
                    var copy = name
                    return copy.withUTF8 { NoteField.named(UnsafeRawBufferPointer($0)) }
                }
            } else {
                field = NoteField.named(UnsafeRawBufferPointer(rebasing: bytes[(keyStart + 1)..<(pos - 1)]))
            }
            try expect(UInt8(ascii: ":"), "':' after a key")
            skipSpace()
            let valueStart = pos
            guard pos < bytes.count else { throw fail("unexpected end of an object") }
            var isString = false, escaped = false
            if bytes[pos] == UInt8(ascii: "\"") {
                isString = true
                escaped = try string()
            } else {
                try skipValue()
            }
            members.append(Member(field: field, value: (base + valueStart)..<(base + pos), isString: isString, escaped: escaped))
            skipSpace()
            guard pos < bytes.count else { throw fail("unexpected end of an object") }
            pos += 1
            if bytes[pos - 1] == UInt8(ascii: "}") { return }
            guard bytes[pos - 1] == UInt8(ascii: ",") else { pos -= 1; throw fail("expected ',' or '}' in a notification") }
        }
    }

    /// Moves past a string (at its opening quote); returns whether it holds an escape.
    private mutating func string() throws(Failure) -> Bool {
        guard pos < bytes.count, bytes[pos] == UInt8(ascii: "\"") else { throw fail("expected a string") }
        pos += 1
        var escaped = false
        while pos < bytes.count {
            // Eight bytes at a time while none of them is a quote, a backslash or a control
            // character (a batch's bytes are mostly string contents: tokens, ids, payload text;
            // byte by byte this loop was a tenth of the worker's instructions for batch entries).
            // The lowest flagged byte is the first such byte: the scan goes straight to it.
            while pos + 8 <= bytes.count {
                let flagged = Self.specialBytes(bytes.loadUnaligned(fromByteOffset: pos, as: UInt64.self))
                if flagged != 0 {
                    pos += flagged.trailingZeroBitCount >> 3
                    break
                }
                pos += 8
            }
            guard pos < bytes.count else { break }
            let c = bytes[pos]
            if c == UInt8(ascii: "\"") { pos += 1; return escaped }
            if c == UInt8(ascii: "\\") { escaped = true; pos += 2; continue }
            if c < 0x20 { throw fail("a control character in a string") }
            pos += 1
        }
        throw fail("unterminated string")
    }

    /// The bytes of `w` (little-endian: byte i is bits 8i..8i+7) that are a quote, a backslash
    /// or below 0x20, each flagged by its high bit: the classic "has a zero byte" on `w` xor the
    /// byte, and "has a byte less than n" for n = 0x20. Nonzero exactly when there is one; the
    /// lowest flag is exact (a borrow can flag only bytes above a real one); bytes of 0x80 and
    /// above are never flagged on their own.
    @inline(__always)
    static func specialBytes(_ w: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        let quote = w ^ (ones &* 0x22), backslash = w ^ (ones &* 0x5C)
        let zeroInQuote = (quote &- ones) & ~quote
        let zeroInBackslash = (backslash &- ones) & ~backslash
        let control = (w &- ones &* 0x20) & ~w
        return (zeroInQuote | zeroInBackslash | control) & highs
    }

    /// Moves past any other value: a number or literal up to its delimiter, an object or array
    /// to its matching close (strings inside it skipped whole, the nesting bounded).
    private mutating func skipValue() throws(Failure) {
        var depth = 0
        let start = pos
        while pos < bytes.count {
            let c = bytes[pos]
            switch c {
            case UInt8(ascii: "\""):
                _ = try string()
                continue
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                depth += 1
                guard depth <= JSON.maxDepth else { throw fail("JSON nested too deeply") }
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                if depth == 0 {
                    guard pos > start else { throw fail("expected a value") }
                    return
                }
                depth -= 1
                if depth == 0 { pos += 1; return }
            case UInt8(ascii: ","), 0x20, 0x0A, 0x0D, 0x09:
                if depth == 0 {
                    guard pos > start else { throw fail("expected a value") }
                    return
                }
            default:
                break
            }
            pos += 1
        }
        if depth > 0 { throw fail("unterminated object or array") }
    }
}
