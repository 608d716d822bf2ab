#if canImport(Glibc)
import Glibc
#endif

/// The request headers the mock looks at. Everything else is ignored, as APNs ignores headers
/// it does not know (user-agent, content-type, ...).
enum RequestHeader: Int {
    case method, path, authorization, topic, pushType, apnsId, priority, expiration, collapseId
    /// Broadcasts and channel management (apns.md, "Broadcast push and channels").
    case channelId, requestId

    /// The header's bit in `MockStream.seenHeaders`.
    var bit: UInt16 { 1 << UInt16(rawValue) }

    /// Finds the header a lowercase HTTP/2 field name names (RFC 9113 §8.2.1: names arrive in
    /// lowercase; nghttp2 rejects others). Compares bytes in place: this runs for every
    /// header of every request.
    static func classify(_ name: UnsafePointer<UInt8>, _ length: Int) -> RequestHeader? {
        switch length {
        case 5: return equals(name, length, ":path") ? .path : nil
        case 7:
            if equals(name, length, ":method") { return .method }
            return equals(name, length, "apns-id") ? .apnsId : nil
        case 10: return equals(name, length, "apns-topic") ? .topic : nil
        case 13:
            if equals(name, length, "authorization") { return .authorization }
            return equals(name, length, "apns-priority") ? .priority : nil
        case 14: return equals(name, length, "apns-push-type") ? .pushType : nil
        case 15:
            if equals(name, length, "apns-expiration") { return .expiration }
            if equals(name, length, "apns-channel-id") { return .channelId }
            return equals(name, length, "apns-request-id") ? .requestId : nil
        case 16: return equals(name, length, "apns-collapse-id") ? .collapseId : nil
        default: return nil
        }
    }

    @inline(__always)
    private static func equals(_ p: UnsafePointer<UInt8>, _ n: Int, _ literal: StaticString) -> Bool {
        n == literal.utf8CodeUnitCount && memcmp(p, literal.utf8Start, n) == 0
    }
}
