import CSwiftPushABI
import PushClientMachine
import PushCore

/// The versions of the caller's `push_notification` record (docs/abi.md: records grow at
/// their end, and `struct_size` says which version the caller has).
///
/// A record older than the library's is never read past its `struct_size`: it is copied into
/// a zeroed record of the current size first (the fields it lacks read as absent), and arrays
/// of such records are walked with the caller's stride, not the library's.
public enum NotificationRecord {
    /// The first version's size (without `channel_id`), what a `struct_size` of 0 means.
    public static let firstVersionSize = MemoryLayout<push_notification>.offset(of: \push_notification.channel_id)!
    /// The second version's size (with `channel_id`, without `deadline_ms`).
    public static let secondVersionSize = MemoryLayout<push_notification>.offset(of: \push_notification.deadline_ms)!
    /// The current version's size.
    public static let currentSize = MemoryLayout<push_notification>.size

    /// Whether `struct_size` names a version: 0 (the first), an older version's size, or the
    /// current size or more (a newer caller's record, read as far as this library knows).
    /// Sizes in between name no version and are refused.
    @inline(__always)
    static func isVersionSize(_ size: Int) -> Bool {
        size == 0 || size == firstVersionSize || size == secondVersionSize
            || (size >= currentSize && size % MemoryLayout<push_notification>.alignment == 0)
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
    /// current (or newer), else a zeroed copy holding the older version's fields. Returns
    /// `refused`'s message when `struct_size` names no version, or a version larger than
    /// `stride`, the spacing of the array the record is in: read as far as its own size says,
    /// it would run into the next record (a batch's records share the first one's size).
    @inline(__always)
    static func readable<R>(_ record: UnsafePointer<push_notification>, stride: Int, refused: (String) -> R,
                            _ body: (UnsafePointer<push_notification>) -> R) -> R {
        let size = Int(UnsafeRawPointer(record).load(as: UInt32.self))
        guard isVersionSize(size) else {
            return refused("push_notification.struct_size is \(size); expected sizeof(push_notification), or PUSH_NOTIFICATION_SIZE_V1 or _V2 for an older version")
        }
        guard (size == 0 ? firstVersionSize : size) <= stride else {
            return refused("push_notification.struct_size is \(size), larger than the batch's spacing of \(stride) bytes (the first record's struct_size): the records of one batch share the first one's struct_size")
        }
        if size >= currentSize { return body(record) }
        var copy = push_notification()
        withUnsafeMutableBytes(of: &copy) { $0.baseAddress!.copyMemory(from: record, byteCount: size == 0 ? firstVersionSize : size) }
        return withUnsafePointer(to: &copy) { body($0) }
    }
}

/// A caller's array of `push_notification` records as a `NotificationBatch`: the C ABI's side
/// of the send path. Each record is read in place (an older, smaller one through a zeroed copy,
/// `NotificationRecord.readable`) into a `NotificationView` of pointers to the caller's bytes,
/// so `push_client_send_batch` still copies them once, into the slots.
package struct CNotificationRecords: NotificationBatch {
    private let base: UnsafePointer<push_notification>
    /// The byte distance between records (`NotificationRecord.stride(of:)`).
    private let stride: Int
    package let count: Int

    package init(_ base: UnsafePointer<push_notification>, count: Int, stride: Int) {
        self.base = base
        self.count = count
        self.stride = stride
    }

    @inline(__always)
    package func withNotification(at index: Int, _ body: (borrowing NotificationView) -> NotificationRules.Violation?) -> NotificationRules.Violation? {
        NotificationRecord.readable(NotificationRecord.at(base, index, stride: stride), stride: stride,
                                    refused: { NotificationRules.Violation(.invalidArgument, $0) }) { n in
            var view = NotificationView()
            view.tag = n.pointee.tag
            view.pushType = n.pointee.push_type
            view.priority = n.pointee.priority
            view.hasExpiration = n.pointee.flags & UInt32(PUSH_NOTIFICATION_HAS_EXPIRATION.rawValue) != 0
            view.expiration = n.pointee.expiration
            view.deviceToken = BorrowedBytes(cString: n.pointee.device_token, length: n.pointee.device_token_len)
            view.topic = BorrowedBytes(cString: n.pointee.topic, length: n.pointee.topic_len)
            view.payload = BorrowedBytes(cString: n.pointee.payload, length: n.pointee.payload_len)
            view.collapseID = BorrowedBytes(cString: n.pointee.collapse_id, length: n.pointee.collapse_id_len)
            view.apnsID = BorrowedBytes(cString: n.pointee.apns_id, length: n.pointee.apns_id_len)
            view.channelID = BorrowedBytes(cString: n.pointee.channel_id, length: n.pointee.channel_id_len)
            // One compare when unused (0: the client's deadline, as in every older record).
            let deadline = n.pointee.deadline_ms
            if deadline != 0 {
                guard deadline > 0 else {
                    return NotificationRules.Violation(.invalidArgument, "push_notification.deadline_ms is \(deadline); expected milliseconds > 0, or 0 for the client's deadline")
                }
                // At most ~31 years, as the Swift API's deadline: the nanoseconds never overflow.
                view.deadlineNanos = UInt64(min(deadline, 1_000_000_000_000)) &* 1_000_000
            }
            return body(view)
        }
    }
}
