#if canImport(Glibc)
import Glibc
#endif
import COpenSSL

/// The OpenSSL BIO under a Redis TLS connection: OpenSSL's own socket BIO writes with `write()`,
/// which raises SIGPIPE when the server has closed the connection — and kills a process that
/// has not blocked it on that thread (a test runner, a host application). This one writes with
/// `send(MSG_NOSIGNAL)` and reads with `recv`, so a closed connection is an EPIPE/ECONNRESET
/// error like any other, whatever thread the connection is used on.
enum RedisSocketBIO {
    /// A BIO over the non-blocking socket `fd` (not owned: `RedisSocket` closes it).
    static func make(fd: Int32) -> OpaquePointer? {
        guard let method, let bio = BIO_new(method) else { return nil }
        BIO_set_data(bio, UnsafeMutableRawPointer(bitPattern: Int(fd) + 1))
        BIO_set_init(bio, 1)
        return bio
    }

    /// The descriptor stored in `bio` (kept + 1, so that fd 0 is not a null pointer).
    private static func fd(_ bio: OpaquePointer?) -> Int32 {
        Int32(Int(bitPattern: BIO_get_data(bio)) - 1)
    }

    /// The method table, made once (a lazy static: thread-safe initialisation) and never
    /// changed afterwards, so sharing the pointer is safe.
    nonisolated(unsafe) private static let method: OpaquePointer? = {
        guard let m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "swiftpush-redis-socket") else { return nil }
        BIO_meth_set_write(m) { bio, data, length in
            BIO_clear_flags(bio, BIO_FLAGS_READ | BIO_FLAGS_WRITE | BIO_FLAGS_SHOULD_RETRY)
            let n = send(RedisSocketBIO.fd(bio), data, Int(length), Int32(MSG_NOSIGNAL))
            if n < 0 && (errno == EAGAIN || errno == EINTR) { BIO_set_flags(bio, BIO_FLAGS_WRITE | BIO_FLAGS_SHOULD_RETRY) }
            return Int32(n)
        }
        BIO_meth_set_read(m) { bio, data, length in
            BIO_clear_flags(bio, BIO_FLAGS_READ | BIO_FLAGS_WRITE | BIO_FLAGS_SHOULD_RETRY)
            let n = recv(RedisSocketBIO.fd(bio), data, Int(length), 0)
            if n < 0 && (errno == EAGAIN || errno == EINTR) { BIO_set_flags(bio, BIO_FLAGS_READ | BIO_FLAGS_SHOULD_RETRY) }
            return Int32(n)
        }
        // Nothing is buffered here: a flush is done at once; other controls are not supported.
        BIO_meth_set_ctrl(m) { _, command, _, _ in command == BIO_CTRL_FLUSH ? 1 : 0 }
        return m
    }()
}
