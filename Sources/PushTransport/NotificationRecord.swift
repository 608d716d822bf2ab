import CSwiftPushABI

/// The versions of the caller's `push_notification` record (docs/abi.md: records grow at
/// their end, and `struct_size` says which version the caller has).
///
/// A record older than the library's is never read past its `struct_size`: it is copied into
/// a zeroed record of the current size first (the fields it lacks read as absent), and arrays
/// of such records are walked with the caller's stride, not the library's.
public enum NotificationRecord {
    /// The first version's size (without `channel_id`), what a `struct_size` of 0 means.
    public static let firstVersionSize = MemoryLayout<push_notification>.offset(of: \push_notification.channel_id)!
    /// The current version's size.
    public static let currentSize = MemoryLayout<push_notification>.size

    /// The byte distance between records of an array whose first record is `first`: its
    /// `struct_size` (0: the first version). A size that is not a record size gives the
    /// library's stride; the first record is then refused by `readable`.
    public static func stride(of first: UnsafePointer<push_notification>) -> Int {
        let size = Int(UnsafeRawPointer(first).load(as: UInt32.self))
        if size == 0 { return firstVersionSize }
        guard size >= firstVersionSize, size % MemoryLayout<push_notification>.alignment == 0 else {
            return MemoryLayout<push_notification>.stride
        }
        return size
    }

    /// The record `index` of an array with `stride`.
    @inline(__always)
    public static func at(_ base: UnsafePointer<push_notification>, _ index: Int, stride: Int) -> UnsafePointer<push_notification> {
        (UnsafeRawPointer(base) + index * stride).assumingMemoryBound(to: push_notification.self)
    }

    /// Calls `body` with the record as a current-version record: the caller's own when it is
    /// current (or newer), else a zeroed copy holding the fields it has. Returns `refused`'s
    /// message when `struct_size` names no version.
    @inline(__always)
    static func readable<R>(_ record: UnsafePointer<push_notification>, refused: (String) -> R,
                            _ body: (UnsafePointer<push_notification>) -> R) -> R {
        let size = Int(UnsafeRawPointer(record).load(as: UInt32.self))
        if size >= currentSize { return body(record) }
        if size != 0 && (size < firstVersionSize || size % MemoryLayout<push_notification>.alignment != 0) {
            return refused("push_notification.struct_size is \(size); expected sizeof(push_notification)")
        }
        var copy = push_notification()
        withUnsafeMutableBytes(of: &copy) { $0.baseAddress!.copyMemory(from: record, byteCount: size == 0 ? firstVersionSize : size) }
        return withUnsafePointer(to: &copy) { body($0) }
    }
}
