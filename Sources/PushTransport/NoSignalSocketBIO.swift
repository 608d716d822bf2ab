#if canImport(Glibc)
import Glibc
#endif
import COpenSSL

/// The BIOs under a client TLS connection. OpenSSL's own socket BIO writes with `write()`,
/// which raises SIGPIPE when the peer has closed the connection, and SIGPIPE's default action
/// kills the process unless the writing thread has blocked it. The I/O threads block it, but
/// some connections are used on the caller's thread: the channel management API's blocking
/// calls (a host's thread, a Swift task's cooperative thread), Redis connections in the CLI,
/// the worker and the Python producer's host. So writes go through this BIO, which sends with
/// `send(MSG_NOSIGNAL)`: a closed connection is an EPIPE error like any other, on any thread.
/// Reads stay on OpenSSL's socket BIO (its end-of-file bookkeeping gives the "unexpected eof"
/// errors the rest of the code reports).
package enum NoSignalSocketBIO {
    /// Gives `ssl` the socket `fd` (not owned: whoever closes `fd` closes it) for reading and
    /// writing, writes without SIGPIPE. False if OpenSSL could not make the BIOs.
    package static func attach(_ ssl: OpaquePointer, fd: Int32) -> Bool {
        guard let method, let writer = BIO_new(method) else { return false }
        guard let reader = BIO_new_socket(fd, BIO_NOCLOSE) else {
            BIO_free(writer)
            return false
        }
        BIO_set_data(writer, UnsafeMutableRawPointer(bitPattern: Int(fd) + 1))
        BIO_set_init(writer, 1)
        SSL_set_bio(ssl, reader, writer)
        return true
    }

    /// The descriptor stored in `bio` (kept + 1, so that fd 0 is not a null pointer).
    private static func fd(_ bio: OpaquePointer?) -> Int32 {
        Int32(Int(bitPattern: BIO_get_data(bio)) - 1)
    }

    /// Errors after which the write is to be tried again, as OpenSSL's socket BIO decides
    /// (`BIO_sock_non_fatal_error`): a full socket, a signal, a connect still in progress.
    private static func isRetryable(_ e: Int32) -> Bool {
        e == EAGAIN || e == EWOULDBLOCK || e == EINTR || e == ENOTCONN || e == EPROTO || e == EINPROGRESS || e == EALREADY
    }

    /// The method table, made once (a lazy static: thread-safe initialisation) and never
    /// changed afterwards, so sharing the pointer is safe.
    nonisolated(unsafe) private static let method: OpaquePointer? = {
        guard let m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "swiftpush socket writer") else { return nil }
        BIO_meth_set_write(m) { bio, data, length in
            BIO_clear_flags(bio, BIO_FLAGS_READ | BIO_FLAGS_WRITE | BIO_FLAGS_IO_SPECIAL | BIO_FLAGS_SHOULD_RETRY)
            let n = send(NoSignalSocketBIO.fd(bio), data, Int(length), Int32(MSG_NOSIGNAL))
            if n < 0 && isRetryable(errno) { BIO_set_flags(bio, BIO_FLAGS_WRITE | BIO_FLAGS_SHOULD_RETRY) }
            return Int32(n)
        }
        // Nothing is buffered here: a flush is done at once; other controls (kTLS and the
        // like) are not supported, which OpenSSL takes as "no".
        BIO_meth_set_ctrl(m) { _, command, _, _ in command == BIO_CTRL_FLUSH ? 1 : 0 }
        return m
    }()
}
