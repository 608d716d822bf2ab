#if canImport(Glibc)
import Glibc
#endif
import CSwiftPushABI
import PushCore
import PushClientCore

/// What a `push_config_t` points to: a configuration being built.
final class ConfigBox {
    /// The tag of its handles (`HandleRecord`).
    static let tag: UInt64 = 0x5350_434F_4E46_4947 // "SPCONFIG"
    /// Options are checked as they are set (`ClientConfiguration.set`); the certificate options
    /// are combined when the client opens (`resolvingCredentials`).
    var configuration = ClientConfiguration()
    let lock = PThreadMutex()

    static func from(_ handle: push_config_t?) -> ConfigBox? {
        HandleRecord.object(handle, tag: tag, as: ConfigBox.self)
    }
}

/// A handle's record (`swiftpush_handle_record`, a C struct): a tag saying which kind of handle
/// it is, and the retained Swift object. The tag is read as plain memory before any Swift
/// reference is formed, so a handle of another kind, or a freed one, is refused without the
/// runtime touching a reference count. What this cannot catch: a pointer to fewer than 8
/// readable bytes, or a freed handle whose memory was reused with the same tag (see "What the
/// library can check" in swiftpush.h).
enum HandleRecord {
    /// A new handle for `object`, tagged `tag` (NULL when memory is exhausted).
    static func make(_ object: AnyObject, tag: UInt64) -> OpaquePointer? {
        guard let raw = malloc(MemoryLayout<swiftpush_handle_record>.size) else { return nil }
        let record = raw.bindMemory(to: swiftpush_handle_record.self, capacity: 1)
        record.initialize(to: swiftpush_handle_record(tag: tag, object: Unmanaged.passRetained(object).toOpaque()))
        return OpaquePointer(record)
    }

    /// The object of a live handle tagged `tag`, or nil.
    static func object<T: AnyObject>(_ handle: OpaquePointer?, tag: UInt64, as: T.Type) -> T? {
        guard let handle else { return nil }
        let record = UnsafeMutablePointer<swiftpush_handle_record>(handle)
        guard record.pointee.tag == tag, let object = record.pointee.object else { return nil }
        return Unmanaged<T>.fromOpaque(object).takeUnretainedValue()
    }

    /// Invalidates the handle and releases its object (call only after `object` found it).
    static func free(_ handle: OpaquePointer) {
        let record = UnsafeMutablePointer<swiftpush_handle_record>(handle)
        let object = record.pointee.object
        record.pointee.tag = 0
        record.pointee.object = nil
        if let object { Unmanaged<AnyObject>.fromOpaque(object).release() }
        Glibc.free(UnsafeMutableRawPointer(record))
    }
}

/// What a `push_client_t` points to. The box outlives `push_client_close` (so that sending
/// after close is an error, not a crash, and results stay pollable) until `push_client_free`.
final class ClientBox {
    /// The tag of its handles (`HandleRecord`).
    static let tag: UInt64 = 0x5350_434C_4945_4E54 // "SPCLIENT"
    let client: PushClientGroup

    init(client: PushClientGroup) { self.client = client }

    static func from(_ handle: push_client_t?) -> ClientBox? {
        HandleRecord.object(handle, tag: tag, as: ClientBox.self)
    }
}

/// Writes a status and message into the caller's optional `push_error` and returns the status.
@discardableResult
func report(_ err: UnsafeMutablePointer<push_error>?, _ status: PushStatus, _ message: String) -> Int32 {
    guard let err else { return status.rawValue }
    err.pointee.code = status.rawValue
    withUnsafeMutableBytes(of: &err.pointee.message) { dst in
        let bytes = message.utf8
        var n = min(bytes.count, dst.count - 1)
        // Never cut a UTF-8 sequence in half.
        while n > 0 && n < bytes.count && (Array(bytes)[n] & 0xC0) == 0x80 { n -= 1 }
        var i = 0
        for b in bytes.prefix(n) { dst[i] = b; i += 1 }
        dst[n] = 0
    }
    return status.rawValue
}

/// Clears the caller's optional `push_error` on success.
@inline(__always)
func succeed(_ err: UnsafeMutablePointer<push_error>?) -> Int32 {
    if let err {
        err.pointee.code = 0
        err.pointee.message.0 = 0
    }
    return 0
}

/// A (pointer, length) string argument, not copied; length 0 reads a NUL-terminated string.
/// Returns nil when it is longer than `limit` bytes: a length that large is refused before a
/// byte is read, and a NUL-terminated string is scanned for at most `limit` + 1 bytes.
func stringArgument(_ p: UnsafePointer<CChar>, _ length: Int, limit: Int) -> UnsafeRawBufferPointer? {
    let n = length == 0 ? strnlen(p, limit + 1) : length
    return n <= limit ? UnsafeRawBufferPointer(start: p, count: n) : nil
}
