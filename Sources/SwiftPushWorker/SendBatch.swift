import PushClientCore
import PushCore
import SwiftPushWorkerMachine

/// The notifications of a `send` action as the client's send path reads them: each field is
/// borrowed from its entry's storage (or a short string of the note's) for the length of the
/// call, so a notification's bytes are copied once, into the client's slot.
struct SendBatch: NotificationBatch {
    let items: [SendItem]
    /// The app's default topic, for notes that name none.
    let defaultTopic: String
    /// Added to each item's tag as the client sees it: the shard's runner (`ShardRunner.tagBase`),
    /// so that a result finds its way back to the machine that sent it.
    var tagBase: UInt64 = 0

    var count: Int { items.count }

    func withNotification(at index: Int, _ body: (borrowing NotificationView) -> NotificationRules.Violation?) -> NotificationRules.Violation? {
        let item = items[index]
        let note = item.note
        let entry = item.entry.entry
        var topic = note.topic ?? defaultTopic
        var collapse = note.collapseID ?? ""
        let payload = note.payload ?? entry.sharedPayload ?? 0..<0
        return entry.storage.withUnsafeBytes { storage in
            topic.withUTF8 { topicBytes in
                note.apnsID.withASCII { idBytes in
                    collapse.withUTF8 { collapseBytes in
                        var v = NotificationView()
                        v.tag = item.tag | tagBase
                        v.pushType = note.pushType.rawValue
                        v.priority = note.priority
                        if let e = note.expiration {
                            v.hasExpiration = true
                            v.expiration = e
                        }
                        v.deviceToken = BorrowedBytes(UnsafeRawBufferPointer(rebasing: storage[note.token]))
                        if !topicBytes.isEmpty { v.topic = BorrowedBytes(UnsafeRawBufferPointer(topicBytes)) }
                        v.payload = BorrowedBytes(UnsafeRawBufferPointer(rebasing: storage[payload]))
                        if note.collapseID != nil { v.collapseID = BorrowedBytes(UnsafeRawBufferPointer(collapseBytes)) }
                        v.apnsID = BorrowedBytes(idBytes)
                        // The reader checked every token and a multicast's shared payload with
                        // the library's own rules, and the apns-id is derived: not again here.
                        v.tokenChecked = true
                        v.apnsIDChecked = true
                        v.payloadChecked = entry.kind == .multicast
                        return body(v)
                    }
                }
            }
        }
    }
}
