import COpenSSL
import PushCore

/// Name-based (version 5, SHA-1) UUIDs, RFC 9562 section 5.5: the apns-id of a queued
/// notification is derived from its `id`, so every resend of the same notification (after a
/// crash, a reclaim, an unknown result) carries the same apns-id and APNs's and the mock's
/// records can tie them together.
public enum NameBasedUUID {
    /// The namespace of swiftpush notification ids (a random UUID fixed once for the project;
    /// documented in docs/worker.md so other languages can derive the same apns-ids).
    public static let notificationNamespace: [UInt8] = parse("5b0f3f1e-8c53-4b8e-9d6a-2f1c7a4e9b30")!

    /// The DNS namespace of RFC 9562 (for the standard test vectors).
    public static let dnsNamespace: [UInt8] = parse("6ba7b810-9dad-11d1-80b4-00c04fd430c8")!

    /// The version-5 UUID of `name` in `namespace` (16 bytes), as lowercase canonical text.
    public static func make(namespace: [UInt8] = notificationNamespace, name: some Collection<UInt8>) -> String {
        precondition(namespace.count == 16)
        // Hashed in two updates and written straight into the string: one allocation per id
        // (the string), where concatenating the input and building the text took five.
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digest in
            var ctx = SHA_CTX()
            SHA1_Init(&ctx)
            namespace.withUnsafeBytes { _ = SHA1_Update(&ctx, $0.baseAddress, $0.count) }
            if let done = name.withContiguousStorageIfAvailable({ SHA1_Update(&ctx, $0.baseAddress, $0.count) }) {
                _ = done
            } else {
                let copy = Array(name)
                copy.withUnsafeBytes { _ = SHA1_Update(&ctx, $0.baseAddress, $0.count) }
            }
            SHA1_Final(digest.baseAddress, &ctx)
            digest[6] = (digest[6] & 0x0F) | 0x50   // version 5
            digest[8] = (digest[8] & 0x3F) | 0x80   // RFC 4122 variant
            return String(unsafeUninitializedCapacity: 36) { out in
                var at = 0
                for i in 0..<16 {
                    if i == 4 || i == 6 || i == 8 || i == 10 {
                        out[at] = UInt8(ascii: "-")
                        at += 1
                    }
                    out[at] = hexDigits[Int(digest[i] >> 4)]
                    out[at + 1] = hexDigits[Int(digest[i] & 0xF)]
                    at += 2
                }
                return at
            }
        }
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    /// The 16 bytes of a canonical UUID text, or nil when it is not one.
    public static func parse(_ text: String) -> [UInt8]? {
        let digits = text.utf8.filter { $0 != UInt8(ascii: "-") }
        guard text.utf8.count == 36, digits.count == 32 else { return nil }
        var bytes: [UInt8] = []
        var i = digits.startIndex
        while i < digits.endIndex {
            guard let hi = JSON.hexValue(digits[i]), let lo = JSON.hexValue(digits[i + 1]) else { return nil }
            bytes.append(hi << 4 | lo)
            i += 2
        }
        return bytes
    }
}
