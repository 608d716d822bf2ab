#if canImport(Glibc)
import Glibc
#endif
import COpenSSL
import CNGHTTP2
import PushCore
import PushTransport

/// The byte pump: TLS in and out, nghttp2 in the middle, and the frame scanner that lets the
/// mock stop at a stream-limit violation.
///
/// Implementation: as in `PushTransport.TLSH2Socket`, nghttp2 never touches the socket.
/// Incoming bytes go SSL_read → scanner → `nghttp2_session_mem_recv`; outgoing frames are
/// gathered with `nghttp2_session_mem_send` into one large buffer and written with one
/// `SSL_write` per batch. TLS writes its records into a buffer in front of the socket
/// (`MockSocketWriter`, set up by `bufferWrites`), so that many records (delayed answers, one
/// record each) can reach the socket in one `write`; `flush()` empties it. The scanner reads
/// only the 9-byte frame headers (RFC 9113 §4.1) and skips payloads, so its cost per request is
/// a few comparisons.
extension MockConnection {
    func handleEvents(_ events: UInt32) {
        switch phase {
        case .handshaking:
            stepHandshake()
        case .open:
            if !closeAfterFlush, events & (EventLoop.readable | EventLoop.errorOrHangup) != 0 {
                readAvailable()
            }
            if phase == .open { flush() }
        case .closed:
            break
        }
    }

    func setInterest(_ bits: UInt32) {
        if bits != interest {
            interest = bits
            loop.modify(fd: fd, interest: bits)
        }
    }

    private func stepHandshake() {
        OpenSSLError.clear()
        let r = SSL_do_handshake(ssl)
        if r == 1 {
            phase = .open
            guard bufferWrites() else {
                close()
                return
            }
            setInterest(EventLoop.readable)
            do throws(TransportError) {
                try startSession()
            } catch {
                close()
                return
            }
            flush()
            return
        }
        switch SSL_get_error(ssl, r) {
        case SSL_ERROR_WANT_READ: setInterest(EventLoop.readable)
        case SSL_ERROR_WANT_WRITE: setInterest(EventLoop.readable | EventLoop.writable)
        default:
            // A client without an acceptable certificate, or not speaking TLS: nothing to say.
            OpenSSLError.clear()
            close()
        }
    }

    // MARK: - Input

    private func readAvailable() {
        while phase == .open && !closeAfterFlush {
            OpenSSLError.clear()
            let n = SSL_read(ssl, inBuf + Self.inHeadroom, Int32(Self.inCap))
            if n > 0 {
                timers.inputRead()
                scan(Int(n))
                continue
            }
            switch SSL_get_error(ssl, n) {
            case SSL_ERROR_WANT_READ:
                return
            case SSL_ERROR_WANT_WRITE:
                setInterest(EventLoop.readable | EventLoop.writable)
                return
            default:
                // Orderly or not, the client is gone.
                OpenSSLError.clear()
                close()
                return
            }
        }
    }

    /// Scans `count` new bytes (at `inBuf + inHeadroom`) frame header by frame header and
    /// feeds them to nghttp2. New client streams are counted as they are seen; when they
    /// could exceed the enforced limit, what precedes the HEADERS frame is fed first so that
    /// the number of open streams is exact, then checked.
    private func scan(_ count: Int) {
        // Put back the start of a frame header that the last read cut off.
        let base = inBuf + Self.inHeadroom - heldCount
        if heldCount > 0 {
            withUnsafeBytes(of: heldHeader) { base.copyMemory(from: $0.baseAddress!, byteCount: heldCount) }
        }
        let total = heldCount + count
        heldCount = 0
        var fed = 0
        var p = 0
        while p < total {
            if prefaceLeft > 0 {
                let k = min(prefaceLeft, total - p)
                prefaceLeft -= k
                p += k
                continue
            }
            if payloadLeft > 0 {
                let k = min(payloadLeft, total - p)
                payloadLeft -= k
                p += k
                continue
            }
            if total - p < 9 {
                // A partial frame header: nghttp2 gets it with the rest on the next read.
                guard deliver(base + fed, p - fed) else { return }
                heldCount = total - p
                withUnsafeMutableBytes(of: &heldHeader) { $0.baseAddress!.copyMemory(from: base + p, byteCount: heldCount) }
                unfedNewStreams = 0
                return
            }
            let h = (base + p).assumingMemoryBound(to: UInt8.self)
            payloadLeft = Int(h[0]) << 16 | Int(h[1]) << 8 | Int(h[2])
            let streamID = Int32(h[5] & 0x7F) << 24 | Int32(h[6]) << 16 | Int32(h[7]) << 8 | Int32(h[8])
            if h[3] == 1 /* HEADERS */, streamID & 1 == 1, streamID > highestScannedStream {
                highestScannedStream = streamID
                unfedNewStreams += 1
                if goawayLastStream == nil, openStreams + unfedNewStreams > Int(enforcedLimit) {
                    guard deliver(base + fed, p - fed) else { return }
                    fed = p
                    unfedNewStreams = 1
                    if openStreams >= Int(enforcedLimit) {
                        violateStreamLimit()
                        return
                    }
                }
            }
            p += 9
        }
        _ = deliver(base + fed, total - fed)
        unfedNewStreams = 0
    }

    /// Gives `count` bytes to nghttp2. False when the connection stops taking input (closed,
    /// or being killed).
    private func deliver(_ bytes: UnsafeMutableRawPointer, _ count: Int) -> Bool {
        guard count > 0 else { return !closeAfterFlush }
        guard let session else { return false }
        inSessionCall = true
        let rv = nghttp2_session_mem_recv(session, bytes.assumingMemoryBound(to: UInt8.self), count)
        inSessionCall = false
        if rv < 0 || closeRequested {
            close()
            return false
        }
        return !closeAfterFlush
    }

    // MARK: - Output

    /// Puts a buffer between TLS and the socket (after the handshake, which has its own): TLS
    /// records accumulate there until `flush()` writes them, or it fills. False on failure.
    private func bufferWrites() -> Bool {
        let writer = MockSocketWriter(fd: fd, capacity: Self.socketWriteBuffer)
        guard let bio = MockSocketWriter.makeBIO(for: writer) else { return false }
        // SSL_set0_wbio drops the SSL's write reference to the socket BIO (the read side keeps
        // its) and takes this one; SSL_free (in `close`) frees it while `writer` is alive.
        SSL_set0_wbio(ssl, bio)
        socketWriter = writer
        return true
    }

    /// Writes the TLS records waiting in the buffer to the socket. False when it would block
    /// (write interest is set, and the next event flushes again) or the connection failed (closed).
    private func flushSocket() -> Bool {
        guard let socketWriter else { return true }
        switch socketWriter.drain() {
        case .done:
            return true
        case .wouldBlock:
            setInterest(closeAfterFlush ? EventLoop.writable : EventLoop.readable | EventLoop.writable)
        case .failed:
            close()
        }
        return false
    }

    /// Gathers frames from nghttp2 and writes them; call after submitting work. Closes when
    /// the session is done, or when `closeAfterFlush` and everything is written.
    /// `recordPerAnswer`: each answer (a HEADERS frame and what follows it up to the next
    /// HEADERS) becomes a TLS record of its own, as APNs's answers do when they arrive spread
    /// out in time; otherwise the whole batch goes in as few records as TLS makes of it.
    func flush(recordPerAnswer: Bool = false) {
        guard phase == .open else { return }
        // SSL_get_error reads the thread's error queue, which only failures add to: clear it
        // before the first write and after each gather (callbacks verify JWTs), not per write.
        OpenSSLError.clear()
        while true {
            if outStart == outEnd {
                outStart = 0
                outEnd = 0
                recordEnd = 0
                if !sessionFinished {
                    guard gather() else { return }
                    OpenSSLError.clear()
                }
                if outEnd == 0 { break }
            }
            let length: Int
            if recordPerAnswer {
                if outStart >= recordEnd { recordEnd = answerRecordEnd(from: outStart) }
                length = recordEnd - outStart
            } else {
                length = outEnd - outStart
            }
            let w = SSL_write(ssl, outBuf + outStart, Int32(length))
            if w > 0 {
                outStart += Int(w)
                continue
            }
            // OpenSSL wants a retried SSL_write to be no shorter than the one that had to wait:
            // whichever flush comes next writes at least up to here.
            recordEnd = outStart + length
            switch SSL_get_error(ssl, w) {
            case SSL_ERROR_WANT_WRITE:
                // While closing, input is no longer read: wait for writability only, or a
                // level-triggered readable socket would spin the loop.
                setInterest(closeAfterFlush ? EventLoop.writable : EventLoop.readable | EventLoop.writable)
                return
            case SSL_ERROR_WANT_READ:
                setInterest(EventLoop.readable)
                return
            default:
                OpenSSLError.clear()
                close()
                return
            }
        }
        guard flushSocket() else { return }
        if closeAfterFlush {
            close()
            return
        }
        setInterest(EventLoop.readable)
        if let session, nghttp2_session_want_read(session) == 0, nghttp2_session_want_write(session) == 0 {
            close()
        }
    }

    /// The end of the record that starts at `start` (a frame boundary) when each answer is a
    /// record of its own: the first frame and the frames after it up to the next HEADERS frame
    /// (an error answer's DATA, a WINDOW_UPDATE or GOAWAY ride with the answer before them).
    /// A frame that `gather` cut at the end of the buffer goes with the record it is part of.
    private func answerRecordEnd(from start: Int) -> Int {
        var p = start
        while outEnd - p >= 9 {
            let h = (outBuf + p).assumingMemoryBound(to: UInt8.self)
            if p > start && h[3] == 1 /* HEADERS */ { return p }
            p += 9 + (Int(h[0]) << 16 | Int(h[1]) << 8 | Int(h[2]))
        }
        return outEnd
    }

    /// Appends nghttp2's pending frames to the output buffer, up to a batch. False when the
    /// connection closed meanwhile.
    @discardableResult
    func gather() -> Bool {
        guard let session else { return false }
        inSessionCall = true
        while outEnd < Self.batchBytes {
            var chunk: UnsafePointer<UInt8>?
            let n = nghttp2_session_mem_send(session, &chunk)
            if n < 0 {
                inSessionCall = false
                close()
                return false
            }
            if n == 0 { break }
            // The pointer from mem_send is valid only until the next call: copy it now.
            appendOutput(UnsafeRawPointer(chunk!), n)
        }
        inSessionCall = false
        if closeRequested {
            close()
            return false
        }
        return true
    }

    /// Appends raw bytes to the output buffer, growing it when needed.
    func appendOutput(_ bytes: UnsafeRawPointer, _ count: Int) {
        if outEnd + count > outCap {
            let newCap = outEnd + count + 64 * 1024
            let bigger = UnsafeMutableRawPointer.allocate(byteCount: newCap, alignment: 16)
            bigger.copyMemory(from: outBuf, byteCount: outEnd)
            outBuf.deallocate()
            outBuf = bigger
            outCap = newCap
        }
        (outBuf + outEnd).copyMemory(from: bytes, byteCount: count)
        outEnd += count
    }
}
