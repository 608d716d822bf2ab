#if canImport(Glibc)
import Glibc
#endif
import COpenSSL
import CNGHTTP2
import PushCore
import PushCrypto
import PushTransport

/// Input: SSL_read, the frame scanner, nghttp2. New client streams are counted as the scanner
/// finds them; when they could break the stream limit, what precedes the HEADERS frame is fed
/// first so that the connection's count of open streams is exact, then the connection decides.
extension MockPump {
    func readAvailable() {
        while phase == .open && !closeAfterFlush {
            OpenSSLError.clear()
            let n = SSL_read(ssl, inBuf + FrameScanner.headroom, Int32(Self.inCap))
            if n > 0 {
                clock.newInput()
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

    /// Scans `count` new bytes (at `inBuf + headroom`) and feeds them to nghttp2, stopping at a
    /// stream the connection refuses.
    private func scan(_ count: Int) {
        guard let requests else { return }
        let (base, total) = scanner.resume(inBuf + FrameScanner.headroom, count: count)
        var fed = 0
        var p = 0
        // New streams in bytes not yet given to nghttp2.
        var unfed = 0
        while let headers = scanner.nextNewStream(base, total: total, position: &p) {
            unfed += 1
            guard requests._withUnsafeGuaranteedRef({ $0.mayExceedStreamLimit(arriving: unfed) }) else { continue }
            guard deliver(base + fed, headers - fed) else { return }
            fed = headers
            unfed = 1
            // Refused: the connection has sent its GOAWAY and is closing.
            guard requests._withUnsafeGuaranteedRef({ $0.admitNewStream() }) else { return }
        }
        // The bytes up to `p` are whole frames (or parts of frames nghttp2 takes as they come);
        // a frame header cut off after them waits for the next read.
        _ = deliver(base + fed, p - fed)
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
}
