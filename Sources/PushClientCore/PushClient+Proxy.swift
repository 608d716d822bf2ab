import COpenSSL
import PushClientMachine
import PushCore
import PushCrypto

extension PushClient {
    /// The HTTP/1.1 CONNECT request that opens a tunnel to `host:port` through the proxy
    /// (RFC 9110 §9.3.6: the target as host:port), with `Proxy-Authorization: Basic` when there
    /// are credentials (RFC 7617: standard base64 of "user:password").
    ///
    /// Built straight into `SecretBytes`: the request carries the credentials, and every
    /// connection of the client's life sends it again, so it is kept, and cleared when freed.
    package static func connectRequest(host: String, port: Int, credentials: SecretBytes?) -> SecretBytes {
        let authority = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" // IPv6 literals in brackets
        let head = Array("CONNECT \(authority) HTTP/1.1\r\nHost: \(authority)\r\n".utf8)
        let authPrefix = Array("Proxy-Authorization: Basic ".utf8)
        let end = Array("\r\n".utf8)
        let encodedCount = credentials.map { ($0.count + 2) / 3 * 4 } ?? 0
        let capacity = head.count + authPrefix.count + encodedCount + 1 + 2 * end.count
        return SecretBytes.writing(capacity: capacity) { out in
            var n = 0
            func put(_ bytes: [UInt8]) {
                out.baseAddress!.advanced(by: n).copyMemory(from: bytes, byteCount: bytes.count)
                n += bytes.count
            }
            put(head)
            if let credentials {
                put(authPrefix)
                // EVP_EncodeBlock writes the padded base64 and a NUL (the + 1 above), which the
                // next line's CR overwrites.
                n += credentials.withUnsafeBytes { raw in
                    Int(EVP_EncodeBlock(out.baseAddress!.advanced(by: n).assumingMemoryBound(to: UInt8.self),
                                        raw.baseAddress?.assumingMemoryBound(to: UInt8.self), Int32(raw.count)))
                }
                put(end)
            }
            put(end)
            return n
        }
    }
}
