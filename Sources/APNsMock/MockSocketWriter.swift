#if canImport(Glibc)
import Glibc
#endif
import COpenSSL

/// Where a connection's TLS records wait for the socket: TLS writes each record into this
/// buffer (through a BIO of its own, `MockSocketWriter.method`), and `drain()` writes them to
/// the socket, many records per `write`.
///
/// Implementation: it replaces a `BIO_f_buffer` in front of the socket BIO. OpenSSL 3 talks to
/// its write BIO more than once per record (the record's `BIO_write`, and a
/// `BIO_get_ktls_send` control), and through a filter chain every call is forwarded: with a
/// delayed answer in each record, those calls were a measurable part of the mock's cost per
/// answer. Here a write is a copy and a control is a `switch`. Same behaviour as the buffer
/// it replaces: a record that does not fit first pushes what waits to the socket, a write
/// larger than the buffer is taken in part, and when the socket takes nothing the write asks
/// to be retried (`SSL_ERROR_WANT_WRITE`).
final class MockSocketWriter {
    /// How the last `drain()` ended.
    enum DrainResult { case done, wouldBlock, failed }

    let fd: Int32
    let capacity: Int
    private let buffer: UnsafeMutableRawPointer
    /// The bytes waiting are `buffer[start..<end]`.
    private var start = 0
    private var end = 0
    /// Set when a write failed for another reason than a full socket (the connection is lost).
    private(set) var failed = false

    /// Bytes waiting for the socket.
    var pending: Int { end - start }

    init(fd: Int32, capacity: Int) {
        self.fd = fd
        self.capacity = capacity
        buffer = .allocate(byteCount: capacity, alignment: 16)
    }

    deinit { buffer.deallocate() }

    /// A write BIO that appends to `writer`, which must outlive it (the connection owns both;
    /// `SSL_free` frees the BIO first). Nil if OpenSSL cannot make one.
    static func makeBIO(for writer: MockSocketWriter) -> OpaquePointer? {
        guard let method, let bio = BIO_new(method) else { return nil }
        BIO_set_data(bio, Unmanaged.passUnretained(writer).toOpaque())
        BIO_set_init(bio, 1)
        return bio
    }

    /// Appends up to `count` bytes, pushing what waits to the socket first when they do not all
    /// fit. Returns how many it took: all of them, or as many as there is room for (a write
    /// larger than the whole buffer goes in pieces, as OpenSSL's record writer allows: it comes
    /// back for the rest), or 0 when the socket takes nothing now (or failed: `failed`).
    func append(_ bytes: UnsafeRawPointer, _ count: Int) -> Int {
        if end + count > capacity {
            if drain() == .failed { return 0 }
            if end + count > capacity && start > 0 {
                // Still not room for all: move what is left to the front.
                buffer.copyMemory(from: buffer + start, byteCount: end - start)
                end -= start
                start = 0
            }
        }
        let taken = min(count, capacity - end)
        guard taken > 0 else { return 0 }
        (buffer + end).copyMemory(from: bytes, byteCount: taken)
        end += taken
        return taken
    }

    /// Writes what waits to the socket, as far as it takes it.
    func drain() -> DrainResult {
        while start < end {
            // MSG_NOSIGNAL: a peer that is gone is a failed write, never a SIGPIPE.
            let n = send(fd, buffer + start, end - start, Int32(MSG_NOSIGNAL))
            if n > 0 {
                start += n
                continue
            }
            if n < 0 && errno == EINTR { continue }
            if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return .wouldBlock }
            failed = true
            return .failed
        }
        start = 0
        end = 0
        return .done
    }

    /// What `BIO_clear_retry_flags` clears (a macro Swift cannot call).
    private static let retryFlags = BIO_FLAGS_READ | BIO_FLAGS_WRITE | BIO_FLAGS_IO_SPECIAL | BIO_FLAGS_SHOULD_RETRY

    /// The BIO method, made once (nil if OpenSSL cannot).
    nonisolated(unsafe) private static let method: OpaquePointer? = {
        guard let m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "swiftpush mock socket writer") else { return nil }
        BIO_meth_set_write_ex(m) { bio, data, count, written in
            guard let bio, let data, let p = BIO_get_data(bio) else { return 0 }
            BIO_clear_flags(bio, retryFlags)
            // Once per record: no retain and release of the writer (the connection holds it).
            return Unmanaged<MockSocketWriter>.fromOpaque(p)._withUnsafeGuaranteedRef { writer in
                let taken = writer.append(data, count)
                guard taken > 0 else {
                    if !writer.failed { BIO_set_flags(bio, BIO_FLAGS_WRITE | BIO_FLAGS_SHOULD_RETRY) }
                    return 0
                }
                written?.pointee = taken
                return 1
            }
        }
        BIO_meth_set_ctrl(m) { bio, command, _, _ in
            guard let bio, let p = BIO_get_data(bio) else { return 0 }
            let writer = Unmanaged<MockSocketWriter>.fromOpaque(p)
            switch command {
            case BIO_CTRL_FLUSH:
                BIO_clear_flags(bio, retryFlags)
                switch writer._withUnsafeGuaranteedRef({ $0.drain() }) {
                case .done: return 1
                case .wouldBlock:
                    BIO_set_flags(bio, BIO_FLAGS_WRITE | BIO_FLAGS_SHOULD_RETRY)
                    return 0
                case .failed: return -1
                }
            case BIO_CTRL_WPENDING:
                return writer._withUnsafeGuaranteedRef { $0.pending }
            default:
                // Not a kTLS socket, nothing to read, no chain: OpenSSL's other questions get 0.
                return 0
            }
        }
        return m
    }()
}
