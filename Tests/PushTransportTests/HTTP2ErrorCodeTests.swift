import Testing
import CNGHTTP2
import PushCore

/// The client's core names HTTP/2 error codes from its own table (`HTTP2ErrorCode`, no nghttp2
/// in the core): the names must stay nghttp2's, which users have seen in results and logs.
@Suite("HTTP/2 error code names")
struct HTTP2ErrorCodeTests {
    @Test("Every code from 0 to 31 is named as nghttp2_http2_strerror names it")
    func sameAsNGHTTP2() {
        for code in UInt32(0)..<32 {
            #expect(HTTP2ErrorCode.name(code) == String(cString: nghttp2_http2_strerror(code)), "code \(code)")
        }
        #expect(HTTP2ErrorCode.name(UInt32.max) == String(cString: nghttp2_http2_strerror(UInt32.max)))
    }
}

extension HTTP2ErrorCodeTests {
    @Test("The refused-stream code the core resends on is nghttp2's")
    func refusedStream() {
        #expect(HTTP2ErrorCode.refusedStream == NGHTTP2_REFUSED_STREAM.rawValue)
    }
}
