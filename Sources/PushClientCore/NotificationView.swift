#if canImport(Glibc)
import Glibc
#endif
import PushClientMachine
import PushCore

/// One field of a notification: bytes borrowed from the caller for the length of a send.
///
/// The send path reads a field only when it reaches it (`resolved`), after the fields before
/// it passed their rules, and checks a length before any byte: so a C caller's field that
/// follows an invalid one is never touched, and a length too large to be one is refused
/// without reading the memory it claims. Swift callers always give a known length; the C ABI
/// also gives NUL-terminated strings (length 0) and sizes that are no length at all.
package struct BorrowedBytes {
    // Inlinable, with their fields: the Swift API fills views from another module, per
    // notification.
    /// nil: the field is absent.
    @usableFromInline let start: UnsafeRawPointer?
    /// The byte count; 0 reads a NUL-terminated string; negative is no length (the C ABI's
    /// encoding, kept as it is so that reading a C record costs two stores per field).
    @usableFromInline let length: Int

    /// An absent field (no topic, no collapse id...).
    @inlinable
    package static var absent: BorrowedBytes { BorrowedBytes(cString: nil, length: 0) }

    /// A present field of known length (possibly empty: then a NUL-terminated empty string).
    @inlinable
    package init(_ bytes: UnsafeRawBufferPointer) {
        if let base = bytes.baseAddress, bytes.count > 0 {
            start = base
            length = bytes.count
        } else {
            start = UnsafeRawPointer(Self.emptyString.utf8Start)
            length = 0
        }
    }

    /// A field of the C ABI: NULL is absent, length 0 means NUL-terminated, and a size_t of
    /// 2^63 or more (a negative ptrdiff_t cast to size_t, or garbage) arrives as a negative Int
    /// and is no length.
    @inlinable
    package init(cString: UnsafePointer<CChar>?, length: Int) {
        start = UnsafeRawPointer(cString)
        self.length = length
    }

    @usableFromInline static var emptyString: StaticString { "" }

    /// Whether the field is present.
    @inline(__always)
    package var isPresent: Bool { start != nil }

    /// The field's bytes (empty when absent); nil when its length is no length. A
    /// NUL-terminated field is measured here.
    @inline(__always)
    package func resolved() -> UnsafeRawBufferPointer? {
        guard let start else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        if length < 0 { return nil }
        return UnsafeRawBufferPointer(start: start, count: length == 0 ? strlen(start.assumingMemoryBound(to: CChar.self)) : length)
    }
}

/// One notification as the send path reads it (`PushClient.send`): the caller's fields,
/// borrowed for the length of the call, then checked and copied into a slot by the one fill
/// for each request kind. The C ABI's `push_notification` records and the Swift API's values
/// are both read through it (`NotificationBatch`), so both take the same rules and the same
/// single copy.
package struct NotificationView {
    /// Returned with the result.
    package var tag: UInt64 = 0
    /// A `PushType` raw value (`PUSH_TYPE_*`); checked by the fill.
    package var pushType: Int32 = 0
    /// 10, 5 or 1; 0 means the push type's default.
    package var priority: Int32 = 0
    /// Whether `expiration` is sent (apns-expiration).
    package var hasExpiration = false
    /// UNIX seconds (0: try once).
    package var expiration: Int64 = 0
    /// How long the notification may take from its send, in nanoseconds (0: the client's
    /// deadline, `PUSH_OPT_DEADLINE_MS`).
    package var deadlineNanos: UInt64 = 0
    /// Hex digits (device notifications; absent for a broadcast).
    package var deviceToken = BorrowedBytes.absent
    /// apns-topic (absent: the client's default topic); a broadcast's bundle id.
    package var topic = BorrowedBytes.absent
    /// The JSON payload.
    package var payload = BorrowedBytes.absent
    /// apns-collapse-id (device notifications only).
    package var collapseID = BorrowedBytes.absent
    /// A canonical UUID (absent: the library makes one).
    package var apnsID = BorrowedBytes.absent
    /// A broadcast's channel id; present makes the notification a broadcast.
    package var channelID = BorrowedBytes.absent
    /// What the caller has checked already with the same `NotificationRules` (the worker's
    /// entry reader checks every token, derives every apns-id, and checks a multicast's shared
    /// payload once for all its tokens): the fill does not check it again for each notification.
    package var tokenChecked = false
    package var payloadChecked = false
    package var apnsIDChecked = false

    /// No fields yet.
    @inlinable
    package init() {}
}

/// A batch of notifications that `PushClient.send` and `PushClientGroup.send` take: each one
/// read through a `NotificationView` while the batch is filled into slots. Implemented by the
/// C ABI's records (`CNotificationRecords`) and by the Swift API's values.
package protocol NotificationBatch {
    /// How many notifications the batch holds.
    var count: Int { get }
    /// Calls `body` with notification `index`'s fields and returns what it returns (the rule
    /// the notification broke, or nil), or returns without calling it when the notification
    /// cannot be read at all (a C record of no known version).
    func withNotification(at index: Int, _ body: (borrowing NotificationView) -> NotificationRules.Violation?) -> NotificationRules.Violation?
}
