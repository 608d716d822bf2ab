/// The names of HTTP/2's error codes (RFC 9113, section 7), as a GOAWAY or RST_STREAM carries
/// them: one table in Swift, so that the client's pure core can say what a reset or a GOAWAY
/// meant without calling into nghttp2 (issue 34: the core imported CNGHTTP2 for this alone).
/// The words are nghttp2's own (`nghttp2_http2_strerror`), which a test holds them to.
public enum HTTP2ErrorCode {
    /// The registered codes, 0x0 to 0xd, by value.
    static let names = [
        "NO_ERROR", "PROTOCOL_ERROR", "INTERNAL_ERROR", "FLOW_CONTROL_ERROR", "SETTINGS_TIMEOUT",
        "STREAM_CLOSED", "FRAME_SIZE_ERROR", "REFUSED_STREAM", "CANCEL", "COMPRESSION_ERROR",
        "CONNECT_ERROR", "ENHANCE_YOUR_CALM", "INADEQUATE_SECURITY", "HTTP_1_1_REQUIRED",
    ]

    /// REFUSED_STREAM (0x7): the server did not process the stream (RFC 9113, 8.7), so the
    /// request is safe to send again.
    public static let refusedStream: UInt32 = 0x7

    /// The name of `code`, or "unknown" for a code RFC 9113 does not register.
    public static func name(_ code: UInt32) -> String {
        code < names.count ? names[Int(code)] : "unknown"
    }
}
