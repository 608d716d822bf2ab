#if canImport(Glibc)
import Glibc
#endif
import Testing
import COpenSSL
@testable import PushTransport
import PushCore
import PushCrypto

/// A TLS write to a peer that has gone must be an error, never SIGPIPE: the channel management
/// API's blocking calls (and Redis connections) write on the caller's thread, which has not
/// blocked SIGPIPE, and the signal's default action kills the host process. (CI once lost a
/// whole test run this way: a management connection the server had closed, written to from a
/// test's thread.)
@Suite(.timeLimit(.minutes(5)))
struct SIGPIPETests {
    @Test("A client TLS connection whose peer has closed fails its write with EPIPE on a thread that has not blocked SIGPIPE")
    func writeToClosedPeer() throws {
        var ends: [Int32] = [-1, -1]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends) == 0)
        close(ends[1])
        // This thread delivers SIGPIPE (as a host's own thread would); put the mask back after.
        var pipeOnly = sigset_t(), saved = sigset_t()
        sigemptyset(&pipeOnly)
        sigaddset(&pipeOnly, SIGPIPE)
        pthread_sigmask(SIG_UNBLOCK, &pipeOnly, &saved)
        defer { pthread_sigmask(SIG_SETMASK, &saved, nil) }

        let tls = try TLSContext.client(caFile: nil, certificate: nil)
        let ssl = try tls.clientSSL(fd: ends[0], host: "localhost")
        defer {
            SSL_free(ssl)
            close(ends[0])
        }
        // The ClientHello's write meets the closed peer: without the no-signal BIO the process
        // dies here.
        let rc = SSL_do_handshake(ssl)
        let e = errno
        #expect(rc <= 0)
        #expect(SSL_get_error(ssl, rc) == SSL_ERROR_SYSCALL)
        #expect(e == EPIPE, "errno \(e)")
        OpenSSLError.clear()
    }
}
