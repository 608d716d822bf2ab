import CNGHTTP2
import PushCore

extension APNsConnection {
    /// Submits the broadcast in `slotIndex` as a new stream (apns.md, "Broadcast push and
    /// channels"): `POST /4/broadcasts/apps/<bundle id>` with `apns-channel-id`,
    /// `apns-push-type: liveactivity`, `apns-expiration` and `apns-priority` (all required),
    /// `apns-request-id` (the slot's apns-id), and no `apns-topic`. Returns the stream id, or a
    /// negative nghttp2 error.
    func submitBroadcast(slotIndex: Int32, slot: UnsafeMutablePointer<Slot>, authorization: UnsafeRawBufferPointer?) -> Int32 {
        guard let session, let buffer = slot.pointee.storage.buffer else { return -1 }
        var h = HeaderList(nv: nv)
        let s = slot.pointee
        h.add(":method", "POST")
        h.add(":scheme", "https")
        h.add(":authority", authority.baseAddress!, authority.count, HeaderList.noCopy)
        // The path names the app and repeats on every broadcast of it: worth indexing.
        h.add(":path", buffer + SlotLayout.request, Int(s.request.pathLength), HeaderList.noCopy)
        if let authorization {
            h.add("authorization", authorization.baseAddress!, authorization.count, HeaderList.noCopyName)
        }
        // Apple's table once writes "Liveactivity"; header values are compared as sent, and
        // every other mention (and the push type table) says "liveactivity".
        h.add("apns-push-type", BroadcastRules.pushType.headerValue)
        h.add("apns-channel-id", buffer + Int(s.request.channelID.offset), Int(s.request.channelID.length), HeaderList.noCopy)
        switch s.request.priority {
        case 5: h.add("apns-priority", "5")
        case 1: h.add("apns-priority", "1")
        default: h.add("apns-priority", "10")
        }
        h.add("apns-expiration", buffer + Int(s.request.expiration.offset), Int(s.request.expiration.length), HeaderList.noIndex)
        h.add("apns-request-id", buffer + SlotLayout.apnsId, 36, HeaderList.noIndex)
        slot.pointee.transmission.payloadSent = 0
        var provider = nghttp2_data_provider(
            source: nghttp2_data_source(ptr: UnsafeMutableRawPointer(bitPattern: Int(slotIndex) + 1)),
            read_callback: readPayload)
        return nghttp2_submit_request(session, nil, nv, h.count, &provider, UnsafeMutableRawPointer(bitPattern: Int(slotIndex) + 1))
    }
}
