import COpenSSL
import PushCore
import SwiftPushWorkerMachine

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
        id(namespace: namespace, name) { _ in }.description
    }

    /// The version-5 UUID of `first` followed by `rest`'s bytes in the notification namespace,
    /// as an apns-id: a multicast notification's is that of `id`, "/" and its token, hashed in
    /// parts (no concatenated copy). Hashed in updates and packed into the id's two words: no
    /// allocation.
    static func id(namespace: [UInt8] = notificationNamespace, _ first: some Collection<UInt8>,
                   _ rest: (inout SHA_CTX) -> Void) -> UUID128 {
        precondition(namespace.count == 16)
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digest in
            var ctx = SHA_CTX()
            SHA1_Init(&ctx)
            namespace.withUnsafeBytes { _ = SHA1_Update(&ctx, $0.baseAddress, $0.count) }
            update(&ctx, first)
            rest(&ctx)
            SHA1_Final(digest.baseAddress, &ctx)
            digest[6] = (digest[6] & 0x0F) | 0x50   // version 5
            digest[8] = (digest[8] & 0x3F) | 0x80   // RFC 4122 variant
            var high: UInt64 = 0, low: UInt64 = 0
            for i in 0..<8 { high = high << 8 | UInt64(digest[i]) }
            for i in 8..<16 { low = low << 8 | UInt64(digest[i]) }
            return UUID128(high: high, low: low)
        }
    }

    /// The apns-id of a single or batch notification: the UUID of its id's UTF-8 bytes.
    static func id(of notificationID: String) -> UUID128 {
        var text = notificationID
        return text.withUTF8 { id(UnsafeRawBufferPointer($0)) { _ in } }
    }

    /// The apns-id of a multicast notification: the UUID of `id`, "/" and the token.
    static func id(of notificationID: String, token: some Collection<UInt8>) -> UUID128 {
        var text = notificationID
        return text.withUTF8 { bytes in
            id(UnsafeRawBufferPointer(bytes)) { ctx in
                update(&ctx, "/".utf8)
                update(&ctx, token)
            }
        }
    }

    /// Hashes `bytes` into `ctx` (in place when they are contiguous).
    static func update(_ ctx: inout SHA_CTX, _ bytes: some Collection<UInt8>) {
        if bytes.withContiguousStorageIfAvailable({ SHA1_Update(&ctx, $0.baseAddress, $0.count) }) == nil {
            let copy = Array(bytes)
            copy.withUnsafeBytes { _ = SHA1_Update(&ctx, $0.baseAddress, $0.count) }
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
