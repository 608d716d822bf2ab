#if canImport(Glibc)
import Glibc
#endif
import COpenSSL
import CNGHTTP2
import PushCore
import PushTransport

/// Dispatch: pending notifications onto connections with free streams. On the I/O thread.
extension PushClient {
    /// Starts streams for pending notifications on connections with room, spreading them.
    func dispatch(now: UInt64) {
        guard !queue.pending.isEmpty else { return }
        let authorization = currentAuthorization()
        for conn in pool.connections {
            guard let conn, !queue.pending.isEmpty else { continue }
            dispatch(onto: conn, now: now, authorization: authorization)
        }
    }

    /// Between two reads of `conn`: refills the streams its answers just freed (see
    /// APNsConnection.didReceiveChunk). Only a connection of the pool takes new streams.
    ///
    /// The frames are written at once only when many streams were refilled since the last
    /// write (a burst of answers, as on loopback: the server gets work while we read on);
    /// otherwise they wait for the write at the end of this read (`TLSH2Socket.handleEvents`),
    /// so answers that arrive one per TLS record, as from a distant APNs, cost one write per
    /// read rather than one per answer.
    func refill(_ conn: APNsConnection) {
        guard !queue.pending.isEmpty, conn.state.availableStreams > 0, pool.connections[conn.poolIndex] === conn else { return }
        // The read that freed these streams has just read the clock: its time serves here.
        let now = conn.lastInputNanos
        conn.refilledSinceFlush += dispatch(onto: conn, now: now, authorization: currentAuthorization(), flush: false)
        if conn.refilledSinceFlush >= APNsConnection.refillFlushThreshold {
            conn.refilledSinceFlush = 0
            conn.flush()
        }
    }

    /// Starts streams for pending notifications on `conn`, as many as it has room for.
    /// Returns how many streams were started; they are written at once when `flush`.
    @discardableResult
    private func dispatch(onto conn: APNsConnection, now: UInt64, authorization: UnsafeRawBufferPointer?, flush: Bool = true) -> Int {
        var room = conn.state.availableStreams
        if room == 0 { return 0 }
        var started = 0
        var submitted = false
        while room > 0 {
            let index = queue.pending.popFirst(in: slots)
            if index < 0 { break }
            let slot = slots[index]
            if now >= slot.pointee.request.deadlineNanos {
                expireQueued(index)
                continue
            }
            if !slot.pointee.request.hasCallerApnsId && slot.pointee.transmission.attempts == 0 {
                queue.uuid.write(to: slot.pointee.storage.buffer! + SlotLayout.apnsId)
            }
            slot.pointee.answer.status = 0
            slot.pointee.answer.bodyLength = 0
            let streamID = conn.submit(slotIndex: index, slot: slot, authorization: authorization)
            if streamID < 0 {
                // Nothing was sent: the notification waits at the head of the queue.
                queue.pending.prepend(index, in: slots)
                if streamID == NGHTTP2_ERR_STREAM_ID_NOT_AVAILABLE.rawValue {
                    // This connection's stream ids ran out: a replacement takes over.
                    retireByClient(conn)
                } else {
                    // nghttp2 could not take the request now (out of memory): the connection
                    // is sound and another would fare no better, so it stays; the notification
                    // is dispatched again next turn, or ends at its deadline (QueueTimeout).
                    log(.error, .protocolError, "a stream could not be started on the connection to \(configuration.endpoint.host):\(configuration.endpoint.port) "
                        + "(pool position \(conn.poolIndex)): \(String(cString: nghttp2_strerror(streamID))); the notification waits")
                }
                break
            }
            slot.pointee.transmission.streamID = streamID
            slot.pointee.transmission.attempts += 1
            outbox.counters.sent += 1
            conn.inFlightSlots.link(index, slot, in: slots)
            conn.state.streamOpened()
            queue.inFlightTotal += 1
            room -= 1
            started += 1
            submitted = true
        }
        if submitted {
            conn.record.tokenGeneration = queue.authorizationGeneration
            if flush { conn.flush() }
        }
        return started
    }

    /// The `authorization` value in a buffer the client owns, copied again only when the token
    /// is re-signed (so dispatching needs no closure and no array per batch).
    func currentAuthorization() -> UnsafeRawBufferPointer? {
        guard let token else { return nil }
        let (value, generation) = token.currentWithGeneration()
        if generation != queue.authorizationGeneration || queue.authorizationBuffer == nil {
            if let old = queue.authorizationBuffer {
                OPENSSL_cleanse(old.baseAddress, old.count)
                old.deallocate()
            }
            let b = UnsafeMutableRawBufferPointer.allocate(byteCount: value.count, alignment: 1)
            b.copyBytes(from: value)
            queue.authorizationBuffer = b
            if queue.authorizationGeneration != 0 {
                log(.info, .tokenSigned, "provider token re-signed (generation \(generation), iat \(token.issuedAt))")
            }
            queue.authorizationGeneration = generation
        }
        return UnsafeRawBufferPointer(queue.authorizationBuffer!)
    }
}
