import PushCore
import COpenSSL
#if canImport(Glibc)
import Glibc
#endif

/// Bytes that must not outlive their use: private key PEM text. Held in one buffer of its own,
/// never grown or copied by the type itself, and overwritten with zeros (OPENSSL_cleanse, which
/// the compiler may not elide) before the memory is released.
///
/// Why not `[UInt8]`: an array's storage is freed without being cleared, every append that
/// outgrows it leaves the old bytes in freed heap, and copy-on-write copies are invisible. The
/// key still passes through OpenSSL while it is parsed; OpenSSL clears its own copies of
/// private keys (`EVP_PKEY_free` uses `OPENSSL_clear_free`).
///
/// Immutable once made, so it may be shared between threads.
public final class SecretBytes: @unchecked Sendable {
    private let storage: UnsafeMutableRawBufferPointer
    private let ownsStorage: Bool

    /// Copies `bytes` into a new buffer.
    public convenience init(copying bytes: UnsafeRawBufferPointer) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(bytes.count, 1), alignment: 16)
        if let base = bytes.baseAddress, bytes.count > 0 { buffer.baseAddress!.copyMemory(from: base, byteCount: bytes.count) }
        self.init(adopting: buffer, count: bytes.count)
    }

    /// Copies an array's bytes (the array itself is the caller's to clear).
    public convenience init(copying bytes: [UInt8]) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(bytes.count, 1), alignment: 16)
        buffer.copyBytes(from: bytes)
        self.init(adopting: buffer, count: bytes.count)
    }

    /// Copies a string's UTF-8 (a password given as a Swift string: that string's own storage
    /// is out of our reach, so prefer the other initializers where the bytes arrive raw).
    public convenience init(copying text: String) {
        let count = text.utf8.count
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(count, 1), alignment: 16)
        buffer.copyBytes(from: text.utf8)
        self.init(adopting: buffer, count: count)
    }

    /// Makes a secret by writing it in place: `body` gets a buffer of `capacity` bytes and
    /// returns how many it wrote. Nothing passes through ordinary (uncleared) memory.
    public static func writing(capacity: Int, _ body: (UnsafeMutableRawBufferPointer) -> Int) -> SecretBytes {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(capacity, 1), alignment: 16)
        buffer.initializeMemory(as: UInt8.self, repeating: 0)
        let count = body(UnsafeMutableRawBufferPointer(rebasing: buffer[0..<capacity]))
        precondition((0...capacity).contains(count), "SecretBytes.writing: wrote \(count) of \(capacity) bytes")
        return SecretBytes(adopting: buffer, count: count)
    }

    /// Takes `buffer`'s first `count` bytes as the secret; `buffer` was allocated with
    /// `UnsafeMutableRawBufferPointer.allocate` and is released, cleared, on deinit. With
    /// `deallocate` false the caller keeps ownership and only the clearing happens (tests use
    /// that to see it).
    public init(adopting buffer: UnsafeMutableRawBufferPointer, count: Int, deallocate: Bool = true) {
        storage = buffer
        self.count = count
        ownsStorage = deallocate
    }

    /// Length of the secret in bytes.
    public let count: Int

    /// Calls `body` with the bytes; the pointer must not escape it.
    public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeRawBufferPointer(start: storage.baseAddress, count: count))
    }

    /// Calls `body` with the bytes NUL-terminated (for C APIs that take a password as a C
    /// string), from a temporary buffer that is cleared afterwards.
    public func withCString<R>(_ body: (UnsafePointer<CChar>) -> R) -> R {
        let temporary = SecretBytes.writing(capacity: count + 1) { out in
            withUnsafeBytes { out.copyMemory(from: $0) }
            return count + 1
        }
        return temporary.withUnsafeBytes { body($0.baseAddress!.assumingMemoryBound(to: CChar.self)) }
    }

    /// Whether the bytes are valid UTF-8 (checked in place: a `String` made to check them
    /// would leave a copy in freed memory).
    public var isValidUTF8: Bool { withUnsafeBytes { PayloadJSONWriter.firstInvalidUTF8($0) == nil } }

    /// Whether two secrets hold the same bytes (in time independent of where they differ).
    public func sameBytes(as other: SecretBytes) -> Bool {
        guard count == other.count else { return false }
        return withUnsafeBytes { a in other.withUnsafeBytes { b in CRYPTO_memcmp(a.baseAddress, b.baseAddress, count) == 0 } }
    }

    /// A copy as an ordinary array: for APIs that need one. The copy is not cleared when freed.
    public var arrayCopy: [UInt8] { withUnsafeBytes { Array($0) } }

    deinit {
        if let base = storage.baseAddress { OPENSSL_cleanse(base, storage.count) }
        if ownsStorage { storage.deallocate() }
    }
}

/// Printing or dumping a configuration that holds a secret shows its size, never its bytes.
extension SecretBytes: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String { "SecretBytes(\(count) bytes)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["count": count]) }
}
