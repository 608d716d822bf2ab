#if canImport(Glibc)
import Glibc
#endif
import COpenSSL
import CNGHTTP2
import PushClientMachine
import PushCore
import PushTransport

/// Starting streams: the core picks the notifications for a connection (`takeStreams`), the
/// driver submits them to nghttp2 and writes them. On the I/O thread.
extension PushClient {
    /// Submits the notifications the core gives `conn` (as many as it has room for), writes each
    /// stream's id into its slot and reports what started and what nghttp2 refused.
    ///
    /// Refilling between two chunks of a read (`refill`), the frames are written at once only
    /// when many streams were refilled since the last write (a burst of answers, as on loopback:
    /// the server gets work while we read on); otherwise they wait for the write at the end of
    /// this read (`TLSH2Socket.handleEvents`), so answers that arrive one per TLS record, as from
    /// a distant APNs, cost one write per read rather than one per answer.
    func startStreams(on conn: APNsConnection, now: UInt64, refill: Bool) {
        var batch = core.takeStreams(for: conn.id, now: now)
        if batch.isEmpty { return }
        let authorization = currentAuthorization()
        var started = SlotList()
        var refusal: Int32 = 0
        while true {
            let index = batch.head
            if index < 0 { break }
            let streamID = conn.submit(slotIndex: index, slot: slots[index], authorization: authorization)
            if streamID < 0 {
                refusal = streamID
                break
            }
            slots[index].pointee.transmission.streamID = streamID
            _ = batch.popFirst(in: slots)
            started.append(index, in: slots)
        }
        let n = started.count
        core.streamsStarted(&started, on: conn.id, tokenGeneration: self.authorization.generation, now: now, actions: &actions)
        if refusal < 0 {
            // Nothing was sent of the rest: it waits at the head of the queue (a connection whose
            // stream ids ran out is retired, which may close it at once).
            core.streamsNotStarted(&batch, on: conn.id, idsExhausted: refusal == NGHTTP2_ERR_STREAM_ID_NOT_AVAILABLE.rawValue,
                                   errorText: String(cString: nghttp2_strerror(refusal)), actions: &actions)
            performActions(now: now)
        }
        if refill {
            conn.refilledSinceFlush += n
            if conn.refilledSinceFlush >= APNsConnection.refillFlushThreshold {
                conn.refilledSinceFlush = 0
                conn.flush()
            }
        } else if n > 0 {
            conn.flush()
        }
    }

    /// The `authorization` value in a buffer the client owns, copied again only when the token
    /// is re-signed (so dispatching needs no closure and no array per batch).
    func currentAuthorization() -> UnsafeRawBufferPointer? {
        guard let token else { return nil }
        let (value, generation) = token.currentWithGeneration()
        if generation != authorization.generation || authorization.buffer == nil {
            if let old = authorization.buffer {
                OPENSSL_cleanse(old.baseAddress, old.count)
                old.deallocate()
            }
            let b = UnsafeMutableRawBufferPointer.allocate(byteCount: value.count, alignment: 1)
            b.copyBytes(from: value)
            authorization.buffer = b
            if authorization.generation != 0 {
                log(.info, .tokenSigned, "provider token re-signed (generation \(generation), iat \(token.issuedAt))")
            }
            authorization.generation = generation
        }
        return UnsafeRawBufferPointer(authorization.buffer!)
    }
}
