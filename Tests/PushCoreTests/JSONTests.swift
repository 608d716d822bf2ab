@testable import PushCore
import Testing

/// A document `JSON.validate` must reject, and the byte offset it must report.
struct InvalidJSON: Sendable, CustomTestStringConvertible {
    let name: String
    let bytes: [UInt8]
    let offset: Int
    var testDescription: String { name }

    init(_ name: String, _ text: String, offset: Int) {
        self.name = name
        self.bytes = Array(text.utf8)
        self.offset = offset
    }

    init(_ name: String, bytes: [UInt8], offset: Int) {
        self.name = name
        self.bytes = bytes
        self.offset = offset
    }
}

@Suite("JSON", .timeLimit(.minutes(1)))
struct JSONTests {
    private func validate(_ text: String) -> JSON.Failure? { withBytes(text) { JSON.validate($0) } }
    private func validate(_ bytes: [UInt8]) -> JSON.Failure? { withBytes(bytes) { JSON.validate($0) } }
    private func string(_ raw: String) -> String? { withBytes(raw) { JSON.decodeString($0) } }
    private func int64(_ raw: String) -> Int64? { withBytes(raw) { JSON.decodeInt64($0) } }

    // MARK: validate: accepted documents

    @Test("A nested APNs payload with every kind of value is accepted")
    func acceptsNestedDocument() {
        let doc = #"{"aps":{"alert":{"title":"Hi","body":"there"},"badge":1,"sound":"default","content-available":1},"list":[1,2,[3,{}],[]],"t":true,"f":false,"n":null,"e":{}}"#
        #expect(validate(doc) == nil)
    }

    @Test("Unicode escapes, surrogate-pair escapes and raw multi-byte UTF-8 are accepted")
    func acceptsUnicode() {
        #expect(validate(#"{"a":"\u00e9\u4E2D"}"#) == nil)
        #expect(validate(#"{"emoji":"\ud83d\ude00"}"#) == nil)
        #expect(validate("{\"raw\":\"h\u{e9}llo \u{4e2d}\u{6587} \u{1F600} \u{10FFFF}\"}") == nil)
        #expect(validate(#""\" \\ \/ \b \f \n \r \t""#) == nil)
    }

    @Test("Numbers with signs, fractions and exponents are accepted")
    func acceptsNumbers() {
        #expect(validate("[0, -0, 1.5, -12.25e10, 1E+2, 3e-7, 0.0e0, 123456789012345678901234567890]") == nil)
    }

    @Test("Whitespace around and between tokens is accepted")
    func acceptsWhitespace() {
        #expect(validate(" \t\r\n{ \"a\" : [ 1 , 2 ] ,\n\t\"b\" : { } }\n ") == nil)
    }

    @Test("Top-level scalars, empty arrays and empty objects are single valid values", arguments: ["true", "false", "null", "\"x\"", "42", "[]", "{}"])
    func acceptsTopLevelScalars(doc: String) {
        #expect(validate(doc) == nil)
    }

    @Test("Nesting exactly JSON.maxDepth levels deep is accepted")
    func acceptsMaximumDepth() {
        let arrays = String(repeating: "[", count: JSON.maxDepth) + String(repeating: "]", count: JSON.maxDepth)
        let objects = String(repeating: #"{"a":"#, count: JSON.maxDepth) + "1" + String(repeating: "}", count: JSON.maxDepth)
        #expect(validate(arrays) == nil)
        #expect(validate(objects) == nil)
    }

    // MARK: validate: rejected documents

    static let invalidDocuments: [InvalidJSON] = [
        InvalidJSON("empty document", "", offset: 0),
        InvalidJSON("only whitespace", "   ", offset: 3),
        InvalidJSON("trailing comma in an object", #"{"a":1,}"#, offset: 7),
        InvalidJSON("trailing comma in an array", "[1,2,]", offset: 5),
        InvalidJSON("unterminated string", #"{"a":"abc"#, offset: 9),
        InvalidJSON("unterminated object", #"{"a":1"#, offset: 6),
        InvalidJSON("missing value", #"{"a":"#, offset: 5),
        InvalidJSON("missing colon", #"{"a" 1}"#, offset: 5),
        InvalidJSON("single-quoted key", "{'a':1}", offset: 1),
        InvalidJSON("missing comma in an array", "[1 2]", offset: 3),
        InvalidJSON("bad escape", #""a\x""#, offset: 3),
        InvalidJSON("bad unicode escape", #""\u12G4""#, offset: 2),
        InvalidJSON("truncated unicode escape", #""\u12"#, offset: 2),
        InvalidJSON("unescaped control character", bytes: [0x22, 0x61, 0x01, 0x22], offset: 2),
        InvalidJSON("unescaped newline in a string", "\"a\nb\"", offset: 2),
        InvalidJSON("overlong encoding C0 80", bytes: [0x22, 0xC0, 0x80, 0x22], offset: 1),
        InvalidJSON("overlong three-byte encoding E0 80 80", bytes: [0x22, 0xE0, 0x80, 0x80, 0x22], offset: 2),
        InvalidJSON("UTF-16 surrogate ED A0 80", bytes: [0x22, 0xED, 0xA0, 0x80, 0x22], offset: 2),
        InvalidJSON("lone continuation byte", bytes: [0x22, 0x61, 0x80, 0x22], offset: 2),
        InvalidJSON("code point above U+10FFFF (F4 90 80 80)", bytes: [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22], offset: 2),
        InvalidJSON("byte F5 that never appears in UTF-8", bytes: [0x22, 0xF5, 0x80, 0x80, 0x80, 0x22], offset: 1),
        InvalidJSON("truncated multi-byte sequence", bytes: [0x22, 0xE4, 0xB8, 0x22], offset: 3),
        InvalidJSON("trailing garbage after an object", "{} x", offset: 3),
        InvalidJSON("two top-level values", "{}{}", offset: 2),
        InvalidJSON("leading zero", "01", offset: 1),
        InvalidJSON("lone minus", "-", offset: 1),
        InvalidJSON("fraction without digits", "1.", offset: 2),
        InvalidJSON("exponent without digits", "1e+", offset: 3),
        InvalidJSON("leading plus", "+1", offset: 0),
        InvalidJSON("truncated literal", "tru", offset: 0),
        InvalidJSON("misspelt literal", "[nul]", offset: 1),
        InvalidJSON("arrays nested deeper than maxDepth",
                    String(repeating: "[", count: JSON.maxDepth + 1) + String(repeating: "]", count: JSON.maxDepth + 1),
                    offset: JSON.maxDepth),
        InvalidJSON("objects nested deeper than maxDepth",
                    String(repeating: #"{"a":"#, count: JSON.maxDepth + 1) + "1" + String(repeating: "}", count: JSON.maxDepth + 1),
                    offset: JSON.maxDepth * 5),
    ]

    @Test("Malformed documents are rejected with the offset of the offending byte", arguments: invalidDocuments)
    func rejectsInvalidDocument(_ doc: InvalidJSON) throws {
        let failure = try #require(validate(doc.bytes))
        #expect(failure.offset == doc.offset)
        #expect(!failure.message.isEmpty)
    }

    @Test("Invalid UTF-8 is reported as such")
    func namesInvalidUTF8() throws {
        let failure = try #require(validate([0x22, 0xED, 0xA0, 0x80, 0x22]))
        #expect(failure.message.contains("UTF-8"))
    }

    @Test("Excessive nesting is refused rather than recursed into, even when very deep")
    func refusesVeryDeepNesting() throws {
        let failure = try #require(validate(String(repeating: "[", count: 100_000)))
        #expect(failure.offset == JSON.maxDepth)
    }

    // MARK: topLevelMembers

    @Test("topLevelMembers lists keys in order with the exact byte range of each raw value")
    func listsMembersWithValueRanges() throws {
        let doc = #"{"aps":{"alert":"hi"},"n":-12,"s":"x\"y","arr":[1, 2],"b":true}"#
        let bytes = utf8(doc)
        let members = try JSON.topLevelMembers(bytes).get()
        #expect(members.map(\.key) == ["aps", "n", "s", "arr", "b"])
        let values = members.map { String(decoding: bytes[$0.value], as: UTF8.self) }
        #expect(values == [#"{"alert":"hi"}"#, "-12", #""x\"y""#, "[1, 2]", "true"])
    }

    @Test("Value ranges exclude the whitespace around values")
    func rangesExcludeWhitespace() throws {
        let bytes = utf8(" { \"a\" :  1 ,\n \"b\" : \"two\"  } ")
        let members = try JSON.topLevelMembers(bytes).get()
        #expect(members.map { String(decoding: bytes[$0.value], as: UTF8.self) } == ["1", "\"two\""])
    }

    @Test("Keys are returned unescaped")
    func unescapesKeys() throws {
        let members = try JSON.topLevelMembers(utf8(#"{"k\u00e9y":1,"a\"b":2}"#)).get()
        #expect(members.map(\.key) == ["k\u{e9}y", "a\"b"])
    }

    @Test("Only top-level members are listed, not those of nested objects")
    func listsOnlyTopLevel() throws {
        let members = try JSON.topLevelMembers(utf8(#"{"outer":{"inner":{"deep":1}},"x":[{"y":2}]}"#)).get()
        #expect(members.map(\.key) == ["outer", "x"])
    }

    @Test("An empty object has no members")
    func emptyObjectHasNoMembers() throws {
        #expect(try JSON.topLevelMembers(utf8("{}")).get().isEmpty)
    }

    @Test("topLevelMembers refuses documents that are not one valid object", arguments: [
        ("[1]", 0), ("\"s\"", 0), ("", 0), (#"{"a":}"#, 5), (#"{"a":1} x"#, 8), (#"{"a":1"#, 6),
    ])
    func refusesNonObjects(doc: String, offset: Int) {
        guard case .failure(let f) = JSON.topLevelMembers(utf8(doc)) else {
            Issue.record("accepted \(doc)")
            return
        }
        #expect(f.offset == offset)
    }

    // MARK: decodeString

    @Test("decodeString returns plain strings and the empty string unchanged")
    func decodesPlainStrings() {
        #expect(string(#""plain""#) == "plain")
        #expect(string(#""""#) == "")
    }

    @Test("decodeString resolves every simple escape")
    func decodesSimpleEscapes() {
        #expect(string(#""a\"b\\c\/d\be\ff\ng\rh\ti""#) == "a\"b\\c/d\u{8}e\u{c}f\ng\rh\ti")
    }

    @Test("decodeString resolves \\u escapes, including surrogate pairs")
    func decodesUnicodeEscapes() {
        #expect(string(#""\u00e9\u4E2D""#) == "\u{e9}\u{4e2d}")
        #expect(string(#""\ud83d\ude00!""#) == "\u{1F600}!")
        #expect(string(#""\u0041\u0000B""#) == "A\u{0}B")
    }

    @Test("A lone surrogate escape becomes U+FFFD")
    func replacesLoneSurrogates() {
        #expect(string(#""\ud800""#) == "\u{FFFD}")
        #expect(string(#""\ud800\u0041""#) == "\u{FFFD}A")
        #expect(string(#""\udc00x""#) == "\u{FFFD}x")
    }

    @Test("decodeString keeps raw non-ASCII UTF-8 as is")
    func keepsRawNonASCII() {
        #expect(string("\"h\u{e9}llo \u{4e2d}\u{6587} \u{1F600}\"") == "h\u{e9}llo \u{4e2d}\u{6587} \u{1F600}")
    }

    @Test("decodeString returns nil for values that are not well-formed strings", arguments: [
        "123", "\"abc", "abc\"", "\"", #""\x""#, #""\u12""#, #""\u12G4""#, #""a\""#,
    ])
    func rejectsNonStrings(raw: String) {
        #expect(string(raw) == nil)
    }

    // MARK: decodeInt64

    @Test("decodeInt64 reads integers, negative ones and zero")
    func decodesIntegers() {
        #expect(int64("0") == 0)
        #expect(int64("42") == 42)
        #expect(int64("-17") == -17)
        #expect(int64("-0") == 0)
        #expect(int64("1700000000123") == 1_700_000_000_123)
    }

    @Test("decodeInt64 reads Int64.max and returns nil just past it")
    func handlesPositiveOverflow() {
        #expect(int64("9223372036854775807") == Int64.max)
        #expect(int64("9223372036854775808") == nil)
        #expect(int64("99999999999999999999") == nil)
        #expect(int64("-9223372036854775809") == nil)
        #expect(int64("-9223372036854775807") == -Int64.max)
    }

    @Test("decodeInt64 reads Int64.min, which is an integer in range")
    func decodesInt64Min() {
        #expect(int64("-9223372036854775808") == Int64.min)
    }

    @Test("decodeInt64 returns nil for anything that is not a plain integer", arguments: [
        "", "-", "1.5", "1e3", "\"1\"", "true", " 1", "1 ", "0x10", "+1",
    ])
    func rejectsNonIntegers(raw: String) {
        #expect(int64(raw) == nil)
    }

    // MARK: hexValue

    @Test("hexValue accepts both cases of hex digits and nothing else")
    func readsHexDigits() {
        #expect(JSON.hexValue(UInt8(ascii: "0")) == 0)
        #expect(JSON.hexValue(UInt8(ascii: "9")) == 9)
        #expect(JSON.hexValue(UInt8(ascii: "a")) == 10)
        #expect(JSON.hexValue(UInt8(ascii: "F")) == 15)
        #expect(JSON.hexValue(UInt8(ascii: "g")) == nil)
        #expect(JSON.hexValue(UInt8(ascii: "G")) == nil)
        #expect(JSON.hexValue(UInt8(ascii: "/")) == nil)
        #expect(JSON.hexValue(UInt8(ascii: ":")) == nil)
    }

    // MARK: 8-byte string scanning

    @Test("The 8-byte scan flags every word holding a quote, backslash, control or non-ASCII byte, in any position")
    func wordScanHasNoFalseNegatives() {
        let plain = Array("abcdefgh".utf8)
        for special: UInt8 in [0x22, 0x5C, 0x00, 0x01, 0x1F, 0x80, 0xC3, 0xFF] {
            for at in 0..<8 {
                var word = plain
                word[at] = special
                #expect(JSON.mayHoldSpecialByte(word.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }), "\(special) at \(at)")
            }
        }
        for text in ["abcdefgh", "        ", "~~~~~~~~", "!#$%&'()", "0123456/", "ZZZZ[]^_", "{|}~` @A"] {
            #expect(!JSON.mayHoldSpecialByte(Array(text.utf8).withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }), "\(text)")
        }
    }

    @Test("Strings are judged the same wherever a special byte falls relative to 8-byte words")
    func stringScanAtEveryOffset() {
        for length in 0..<24 {
            for at in 0..<max(length, 1) {
                for (insert, valid) in [("\\\"", true), ("\\n", true), ("é", true), ("\u{01}", false), ("\\x", false), ("\u{7F}", true)] {
                    var chars = Array(repeating: "a", count: length)
                    if length > 0 { chars[at] = insert }
                    let json = "{\"k\":\"" + chars.joined() + "\"}"
                    let failure = Array(json.utf8).withUnsafeBytes { JSON.validate($0) }
                    #expect((failure == nil) == valid || length == 0, "\(json.debugDescription)")
                }
                let unterminated = "{\"k\":\"" + String(repeating: "a", count: length)
                #expect(Array(unterminated.utf8).withUnsafeBytes { JSON.validate($0) } != nil)
            }
        }
    }
}
