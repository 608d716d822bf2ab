import PushCore
import PushClientCore

// The Swift API's side of the send path: notification values read through the
// `NotificationView` that `PushClientGroup.send` fills slots from (the C ABI's records take the
// same path, `CNotificationRecords`). The views point into the values' own storage, so the
// only copy of a payload is the client's, into its slot.

extension PushNotification {
    /// Calls `body` with `n`'s fields, borrowed for the call, and `tag`.
    @inline(__always)
    static func withView(of n: borrowing PushNotification, tag: UInt64,
                         _ body: (borrowing NotificationView) -> NotificationRules.Violation?) -> NotificationRules.Violation? {
        var view = NotificationView()
        view.tag = tag
        view.pushType = n.pushType.core.rawValue
        view.priority = Int32(clamping: n.priority?.rawValue ?? 0)
        if let expiration = n.expiration {
            view.hasExpiration = true
            view.expiration = expiration.unixSeconds
        }
        if let deadline = n.deadline {
            guard deadline > .zero else { return NotificationRules.Violation(.invalidArgument, "deadline must be positive, got \(deadline)") }
            // At least a nanosecond (0 would mean the client's deadline); at most ~31 years.
            view.deadlineNanos = max(1, UInt64(min(deadline / .nanoseconds(1), 1e18)))
        }
        let (token, channel): (String?, String?)
        switch n.destination {
        case .device(let t): (token, channel) = (t, nil)
        case .channel(let c): (token, channel) = (nil, c)
        }
        return Self.withBytes(token) { token in
            Self.withBytes(channel) { channel in
                Self.withBytes(n.topic) { topic in
                    Self.withBytes(n.collapseID) { collapse in
                        n.payload.bytes.withUnsafeBytes { payloadBytes in
                            var v = view
                            v.deviceToken = token
                            v.channelID = channel
                            v.topic = topic
                            v.collapseID = collapse
                            v.payload = BorrowedBytes(payloadBytes)
                            guard let apnsID = n.apnsID else { return body(v) }
                            return apnsID.withASCII { id in
                                v.apnsID = BorrowedBytes(id)
                                return body(v)
                            }
                        }
                    }
                }
            }
        }
    }

    /// Calls `body` with `text`'s UTF-8 bytes (absent for nil), without copying a native string.
    @inline(__always)
    private static func withBytes<R>(_ text: String?, _ body: (BorrowedBytes) -> R) -> R {
        guard let text else { return body(.absent) }
        if let r = text.utf8.withContiguousStorageIfAvailable({ body(BorrowedBytes(UnsafeRawBufferPointer($0))) }) { return r }
        var copy = text
        return copy.withUTF8 { body(BorrowedBytes(UnsafeRawBufferPointer($0))) }
    }
}

/// Tagged notifications (`APNsEngine.submit`) as a batch.
struct TaggedBatch: NotificationBatch {
    let items: ArraySlice<TaggedNotification>

    var count: Int { items.count }

    func withNotification(at index: Int, _ body: (borrowing NotificationView) -> NotificationRules.Violation?) -> NotificationRules.Violation? {
        // Borrowed in place: a copy of the item would retain and release each of its strings.
        items.withUnsafeBufferPointer { PushNotification.withView(of: $0[index].notification, tag: $0[index].tag, body) }
    }
}

/// Notifications whose tags follow each other from `firstTag` (`APNsClient`'s, which routes
/// results by tag).
struct NumberedBatch: NotificationBatch {
    let notifications: [PushNotification]
    let firstTag: UInt64

    var count: Int { notifications.count }

    func withNotification(at index: Int, _ body: (borrowing NotificationView) -> NotificationRules.Violation?) -> NotificationRules.Violation? {
        notifications.withUnsafeBufferPointer { PushNotification.withView(of: $0[index], tag: firstTag &+ UInt64(index), body) }
    }
}
