import Foundation
import PushCore
import Testing

@Suite("Base64URL", .timeLimit(.minutes(1)))
struct Base64URLTests {
    /// RFC 4648 §10 test vectors, which use no characters that differ between the two alphabets;
    /// base64url output drops the `=` padding.
    static let rfc4648Vectors: [(plain: String, encoded: String)] = [
        ("", ""), ("f", "Zg"), ("fo", "Zm8"), ("foo", "Zm9v"),
        ("foob", "Zm9vYg"), ("fooba", "Zm9vYmE"), ("foobar", "Zm9vYmFy"),
    ]

    @Test("Encoding matches the RFC 4648 test vectors without padding")
    func encodesRFC4648Vectors() {
        for v in Self.rfc4648Vectors {
            #expect(String(decoding: Base64URL.encode(utf8(v.plain)), as: UTF8.self) == v.encoded, "\(v.plain)")
        }
    }

    @Test("Decoding the RFC 4648 test vectors gives back the original text")
    func decodesRFC4648Vectors() {
        for v in Self.rfc4648Vectors {
            #expect(Base64URL.decode(utf8(v.encoded)) == utf8(v.plain), "\(v.encoded)")
        }
    }

    @Test("Values 62 and 63 are written with the URL-safe characters - and _")
    func usesURLSafeAlphabet() {
        // 0xFB 0xFF 0xBF = sextets 62 63 62 63 ("+/+/" in standard base64).
        #expect(Base64URL.encode([0xFB, 0xFF, 0xBF]) == utf8("-_-_"))
        #expect(Base64URL.encode([0xFB, 0xFF]) == utf8("-_8"))
        #expect(Base64URL.decode(utf8("-_-_")) == [0xFB, 0xFF, 0xBF])
        #expect(Base64URL.decode(utf8("-_8")) == [0xFB, 0xFF])
    }

    @Test("Every byte value from 0 to 255 survives a round trip")
    func roundTripsAllByteValues() {
        let all = (0...255).map { UInt8($0) }
        #expect(Base64URL.decode(Base64URL.encode(all)) == all)
    }

    @Test("Random byte strings of lengths 0 to 40 round-trip and match Foundation's base64url", arguments: 0...40)
    func roundTripsRandomBytes(length: Int) throws {
        for _ in 0..<8 {
            let bytes = randomBytes(length)
            let encoded = Base64URL.encode(bytes)
            #expect(encoded.count == (length * 4 + 2) / 3, "unpadded length")
            #expect(!encoded.contains(UInt8(ascii: "=")))
            let foundation = Data(bytes).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
            #expect(String(decoding: encoded, as: UTF8.self) == foundation)
            #expect(try #require(Base64URL.decode(encoded)) == bytes)
        }
    }

    @Test("Trailing = padding is tolerated when decoding")
    func toleratesPadding() {
        #expect(Base64URL.decode(utf8("Zg==")) == utf8("f"))
        #expect(Base64URL.decode(utf8("Zm8=")) == utf8("fo"))
    }

    @Test("Characters outside the alphabet are rejected", arguments: ["Zm9v*", "Zm 9v", "Zm9v.", "Zm9v\n", "Zm\u{00e9}9", "!!!!", "Zm9v\0"])
    func rejectsInvalidCharacters(text: String) {
        #expect(Base64URL.decode(utf8(text)) == nil)
    }

    @Test("A single leftover sextet is rejected as truncated input", arguments: ["Z", "Zm9vY", "Zm9vYmFyZ"])
    func rejectsTruncatedSextet(text: String) {
        #expect(Base64URL.decode(utf8(text)) == nil)
    }

    @Test("Standard base64's + and / are refused, so a token in the wrong alphabet does not pass", arguments: ["-_+/", "ab+c", "ab/c"])
    func standardAlphabetIsRefused(_ text: String) {
        #expect(Base64URL.decode(utf8(text)) == nil)
    }

    @Test("= is accepted only as trailing padding", arguments: ["AB=CD", "=ABC", "AB=C="])
    func paddingOnlyAtTheEnd(_ text: String) {
        #expect(Base64URL.decode(utf8(text)) == nil)
    }

    @Test("Empty text decodes to no bytes")
    func decodesEmptyText() {
        #expect(Base64URL.decode([UInt8]()) == [])
    }
}
