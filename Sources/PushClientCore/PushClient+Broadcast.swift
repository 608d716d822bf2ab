#if canImport(Glibc)
import Glibc
#endif
import CSwiftPushABI
import PushClientMachine
import PushCore

/// Broadcasts (`POST /4/broadcasts/apps/<bundle id>`, apns.md "Broadcast push and channels")
/// ride the device notifications' path: the same slots, queue, connections, retry policy and
/// deadline. Only the request differs, so only filling the slot (here) and writing the headers
/// (`APNsConnection.submit`) know about them.
extension PushClient {
    /// `fill` for a broadcast: checks the rules Apple states for it and lays the slot out as
    /// path `/4/broadcasts/apps/<bundle id>`, then payload, channel id and expiration digits.
    func fillBroadcast(slot: UnsafeMutablePointer<Slot>, from n: borrowing NotificationView, now: UInt64) -> NotificationRules.Violation? {
        guard let channel = n.channelID.resolved() else { return .init(.badChannelId, notALength("channel_id_len")) }
        if let v = BroadcastRules.checkChannelId(channel) { return v }
        if n.deviceToken.isPresent {
            return .init(.badDeviceToken, "a broadcast (channel_id set) has no device token: set device_token to NULL")
        }
        if n.collapseID.isPresent {
            return .init(.badCollapseId, "a broadcast (channel_id set) has no collapse id: set collapse_id to NULL")
        }
        guard n.pushType == BroadcastRules.pushType.rawValue else {
            return .init(.badPushType, "a broadcast must have push type PUSH_TYPE_LIVEACTIVITY (got \(n.pushType))")
        }
        let bundle: UnsafeRawBufferPointer
        if n.topic.isPresent {
            guard let b = n.topic.resolved() else { return .init(.badTopic, notALength("topic_len")) }
            bundle = b
        } else {
            bundle = constants.defaultTopic
        }
        if let v = BroadcastRules.checkBundleId(bundle) { return v }
        let priority: Int32
        switch BroadcastRules.resolvePriority(n.priority) {
        case .success(let p): priority = p
        case .failure(let v): return v
        }
        guard n.hasExpiration else {
            return .init(.badExpiration, "a broadcast needs apns-expiration: set PUSH_NOTIFICATION_HAS_EXPIRATION (expiration 0 for a channel that stores no message)")
        }
        if let v = NotificationRules.checkExpiration(n.expiration) { return v }
        guard n.payload.isPresent else { return .init(.badPayload, "payload is NULL") }
        guard let payload = n.payload.resolved() else { return .init(.payloadTooLarge, notALength("payload_len")) }
        if let v = BroadcastRules.checkPayload(payload) { return v }
        guard let apnsId = n.apnsID.resolved() else { return .init(.badApnsId, notALength("apns_id_len")) }
        if n.apnsID.isPresent, let v = NotificationRules.checkApnsId(apnsId) { return v }

        let prefix = SlotLayout.broadcastPathPrefix
        let needed = SlotLayout.request + prefix.utf8CodeUnitCount + bundle.count + payload.count + channel.count + 24
        guard SlotTable.reserve(slot, bytes: needed), let buffer = slot.pointee.storage.buffer else {
            return .init(.noMemory, "out of memory copying the broadcast")
        }
        var w = SlotWriter(buffer: buffer)
        w.put(prefix)
        slot.pointee.request.topic = w.put(bundle)
        slot.pointee.request.pathLength = w.written
        slot.pointee.request.payload = w.put(payload)
        slot.pointee.request.channelID = w.put(channel)
        slot.pointee.request.collapseID = w.empty
        slot.pointee.request.expiration = w.putDecimal(n.expiration)
        storeApnsId(apnsId, in: slot)
        slot.pointee.request.pushType = BroadcastRules.pushType.rawValue
        slot.pointee.request.priority = priority
        startFresh(slot, tag: n.tag, now: now, deadlineNanos: n.deadlineNanos)
        return nil
    }
}
