#if canImport(Glibc)
import Glibc
#endif
import COpenSSL
import CNGHTTP2
import PushCore
import PushCrypto
import PushTransport

/// Output: nghttp2's frames gathered into `output`, written with `SSL_write` into the socket
/// writer's buffer, which `flush` writes to the socket. TLS writes its records into a buffer in
/// front of the socket (`MockSocketWriter`, set up by `bufferWrites`), so that many records
/// (delayed answers, one record each) reach the socket in one `write`.
extension MockPump {
    /// Puts a buffer between TLS and the socket (after the handshake, which has its own): TLS
    /// records accumulate there until `flush()` writes them, or it fills. False on failure.
    func bufferWrites() -> Bool {
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
    /// `recordPerAnswer`: each answer becomes a TLS record of its own (`OutputFrames`);
    /// otherwise the whole batch goes in as few records as TLS makes of it.
    func flush(recordPerAnswer: Bool = false) {
        guard phase == .open else { return }
        // SSL_get_error reads the thread's error queue, which only failures add to: clear it
        // before the first write and after each gather (callbacks verify JWTs), not per write.
        OpenSSLError.clear()
        while true {
            if output.isEmpty {
                output.clear()
                if !sessionFinished {
                    guard gather() else { return }
                    OpenSSLError.clear()
                }
                if output.isEmpty { break }
            }
            let length = output.nextWrite(recordPerAnswer: recordPerAnswer)
            let w = SSL_write(ssl, output.base + output.start, Int32(length))
            if w > 0 {
                output.wrote(Int(w))
                continue
            }
            output.mustRetry(length: length)
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

    /// Appends nghttp2's pending frames to the output, up to a batch. False when the connection
    /// closed meanwhile.
    @discardableResult
    func gather() -> Bool {
        guard let session else { return false }
        inSessionCall = true
        while output.end < Self.batchBytes {
            var chunk: UnsafePointer<UInt8>?
            let n = nghttp2_session_mem_send(session, &chunk)
            if n < 0 {
                inSessionCall = false
                close()
                return false
            }
            if n == 0 { break }
            // The pointer from mem_send is valid only until the next call: copy it now.
            output.append(UnsafeRawPointer(chunk!), n)
        }
        inSessionCall = false
        if closeRequested {
            close()
            return false
        }
        return true
    }

    /// Ends the connection with a frame nghttp2 would not send: what nghttp2 still has (answers
    /// to earlier streams) goes first, then `frame`, then the socket closes once all is
    /// written. Nothing nghttp2 says afterwards is sent.
    func finish(with frame: [UInt8]) {
        guard gather() else { return }
        sessionFinished = true
        frame.withUnsafeBytes { output.append($0.baseAddress!, $0.count) }
        closeAfterFlush = true
        flush()
    }
}
