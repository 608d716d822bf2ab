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

    /// Whether `struct_size` names a version: 0 (the first), the first version's size, or the
    /// current size or more (a newer caller's record, read as far as this library knows).
    /// Sizes in between name no version and are refused.
    @inline(__always)
    static func isVersionSize(_ size: Int) -> Bool {
        size == 0 || size == firstVersionSize || (size >= currentSize && size % MemoryLayout<push_notification>.alignment == 0)
    }

    /// The byte distance between records of an array whose first record is `first`: its
    /// `struct_size` (0: the first version). A size that names no version gives the library's
    /// stride; the first record is then refused by `readable`.
    public static func stride(of first: UnsafePointer<push_notification>) -> Int {
        let size = Int(UnsafeRawPointer(first).load(as: UInt32.self))
        guard isVersionSize(size) else { return MemoryLayout<push_notification>.stride }
        return size == 0 ? firstVersionSize : size
    }

    /// The record `index` of an array with `stride`.
    @inline(__always)
    public static func at(_ base: UnsafePointer<push_notification>, _ index: Int, stride: Int) -> UnsafePointer<push_notification> {
        (UnsafeRawPointer(base) + index * stride).assumingMemoryBound(to: push_notification.self)
    }

    /// Calls `body` with the record as a current-version record: the caller's own when it is
    /// current (or newer), else a zeroed copy holding the first version's fields. Returns
    /// `refused`'s message when `struct_size` names no version, or a version larger than
    /// `stride`, the spacing of the array the record is in: read as far as its own size says,
    /// it would run into the next record (a batch's records share the first one's size).
    @inline(__always)
    static func readable<R>(_ record: UnsafePointer<push_notification>, stride: Int, refused: (String) -> R,
                            _ body: (UnsafePointer<push_notification>) -> R) -> R {
        let size = Int(UnsafeRawPointer(record).load(as: UInt32.self))
        guard isVersionSize(size) else {
            return refused("push_notification.struct_size is \(size); expected sizeof(push_notification), or PUSH_NOTIFICATION_SIZE_V1 for the first version")
        }
        guard (size == 0 ? firstVersionSize : size) <= stride else {
            return refused("push_notification.struct_size is \(size), larger than the batch's spacing of \(stride) bytes (the first record's struct_size): the records of one batch share the first one's struct_size")
        }
        if size >= currentSize { return body(record) }
        var copy = push_notification()
        withUnsafeMutableBytes(of: &copy) { $0.baseAddress!.copyMemory(from: record, byteCount: firstVersionSize) }
        return withUnsafePointer(to: &copy) { body($0) }
    }
}
