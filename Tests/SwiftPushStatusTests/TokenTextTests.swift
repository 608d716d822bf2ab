import SwiftPushStatus
import Testing

@Suite("TokenText", .timeLimit(.minutes(1)))
struct TokenTextTests {
    @Test("A token is shortened to its first 8 and last 4 characters, never shown whole")
    func shortened() {
        let token = "00fc13adff785122b4ad28809a3420982341241421348097878e577c991de8f0"
        #expect(TokenText.shortened(token) == "00fc13ad…e8f0")
        #expect(TokenText.shortened("0123456789abcdef") == "01234567…cdef")
    }

    @Test("A short (malformed) token shows at most its first quarter; an empty one nothing")
    func short() {
        #expect(TokenText.shortened("0123456789abcde") == "012…")
        #expect(TokenText.shortened("abc") == "…")
        #expect(TokenText.shortened("") == "…")
    }
}
