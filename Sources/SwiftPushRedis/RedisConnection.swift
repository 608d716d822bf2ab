#if canImport(Glibc)
import Glibc
#endif
import CHiredis
import PushCore

/// One synchronous connection to a Redis node, in the clear or over TLS (`RedisSocket`), with
/// hiredis used for what it is good at: its RESP reader turns the bytes that arrive into reply
/// trees. Commands are written in RESP by `RedisArguments.writeRESP`; every argument is
/// binary-safe, nothing goes through a printf-like format.
///
/// Pipelining: `append` buffers commands, `flush` writes them in one go, `receive` takes the
/// replies in order — or `send` (append + flush) and `command` (send + receive).
/// `receive(parsing:)` hands hiredis's own reply tree to a parser (valid during the call) for
/// the big replies of a hot path, without a copy. The reader is made in one place
/// (`makeReader`), where hiredis's custom reply objects (`redisReaderCreateWithFunctions`) can
/// later build entries straight from the wire.
///
/// Blocking, each call bounded by the command timeout; not thread-safe (one owner at a time).
/// A connection whose I/O failed is closed for good (`isConnected` false): make a new one.
public final class RedisConnection {
    var socket: RedisSocket?
    private let reader: UnsafeMutablePointer<redisReader>
    /// Commands appended and not yet written.
    private var output: [UInt8] = []
    /// What one read takes from the socket at most.
    private let input: UnsafeMutableRawBufferPointer
    let commandTimeoutNanos: UInt64
    /// Where it is connected (`host:port`), for messages.
    public let endpoint: String
    /// The node it is connected to.
    public let node: RedisNode
    /// Commands sent (or appended) whose replies have not been received yet.
    public internal(set) var pendingReplies = 0

    /// Connects to `node` as `connector` says (TLS, credentials, timeouts): TCP, then the TLS
    /// handshake, then `AUTH` (or a `PING` without credentials, so that a server that wants a
    /// password says so now). Failures are classified (`RedisError.isPermanent`).
    public init(node: RedisNode, connector: RedisConnector) throws(RedisError) {
        self.node = node
        endpoint = node.description
        commandTimeoutNanos = UInt64(connector.commandTimeoutMillis) * 1_000_000
        reader = Self.makeReader()
        input = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)
        let deadline = MonotonicTime.nanos() + UInt64(connector.connectTimeoutMillis) * 1_000_000
        socket = try RedisSocket.connect(to: node, tls: connector.tls, deadline: deadline)
        try greet(connector, deadline: deadline)
    }

    deinit {
        redisReaderFree(reader)
        input.deallocate()
    }

    /// A reader whose replies are hiredis's own `redisReply` trees. Its unused buffer is kept
    /// whatever its size (maxbuf 0): a big reply is followed by more of them.
    private static func makeReader() -> UnsafeMutablePointer<redisReader> {
        let r = redisReaderCreate()!
        r.pointee.maxbuf = 0
        return r
    }

    /// True until an I/O or protocol error (or `close`) ends the connection.
    public var isConnected: Bool { socket != nil }

    /// Closes the connection; later calls throw `connectionLost`.
    public func close() {
        socket?.close()
        socket = nil
        output.removeAll()
        pendingReplies = 0
    }

    /// Runs one command given as strings (an error reply is returned, not thrown).
    public func command(_ args: String...) throws(RedisError) -> RedisReply {
        try command(RedisArguments(args))
    }

    /// Runs one command whose arguments are packed in `args`.
    public func command(_ args: RedisArguments) throws(RedisError) -> RedisReply {
        try send(args)
        return try receive()
    }

    /// Sends every command in one write and reads their replies in order (one round trip).
    public func pipeline(_ commands: [RedisArguments]) throws(RedisError) -> [RedisReply] {
        for c in commands { try append(c) }
        try flush()
        var replies: [RedisReply] = []
        replies.reserveCapacity(commands.count)
        for _ in commands { replies.append(try receive()) }
        return replies
    }

    /// Writes one command without waiting for its reply (read it with `receive`, replies come
    /// in the order the commands were sent): the caller works while Redis runs it.
    public func send(_ args: RedisArguments) throws(RedisError) {
        try append(args)
        try flush()
    }

    /// Adds one command to the output buffer without writing it (a pipeline: `flush` writes
    /// them all at once).
    public func append(_ args: RedisArguments) throws(RedisError) {
        guard socket != nil else { throw notConnected() }
        args.writeRESP(into: &output)
        pendingReplies += 1
    }

    /// Writes every command appended: Redis starts on them at once.
    public func flush() throws(RedisError) {
        guard let socket else { throw notConnected() }
        if output.isEmpty { return }
        let deadline = MonotonicTime.nanos() + commandTimeoutNanos
        // Array's withUnsafeBytes rethrows untyped errors: the error comes out as a value.
        let failure: RedisError? = output.withUnsafeBytes { bytes in
            do throws(RedisError) {
                try socket.write(bytes, deadline: deadline)
                return nil
            } catch {
                return error
            }
        }
        if let failure { throw lost(failure) }
        output.removeAll(keepingCapacity: true)
    }

    /// The reply to the oldest command sent and not yet answered (waits for it).
    public func receive() throws(RedisError) -> RedisReply {
        try receive(parsing: RedisReply.init(copying:))
    }

    /// The reply to the oldest command sent and not yet answered, handed to `parse` as hiredis's
    /// own tree (valid during the call only) instead of being copied into a `RedisReply`: for
    /// the big replies of the hot path (a batch of stream entries), where copying every string
    /// into an array of its own showed in the worker's profile.
    public func receive<T>(parsing parse: (UnsafePointer<redisReply>) -> T) throws(RedisError) -> T {
        guard let socket else { throw notConnected() }
        if !output.isEmpty { try flush() }
        let deadline = MonotonicTime.nanos() + commandTimeoutNanos
        while true {
            var raw: UnsafeMutableRawPointer?
            if redisReaderGetReply(reader, &raw) != REDIS_OK {
                let message = withUnsafeBytes(of: reader.pointee.errstr) { raw -> String in
                    String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
                }
                throw lost(RedisError(.connection, "Redis at \(endpoint): protocol error: \(message)"))
            }
            if let raw {
                defer { freeReplyObject(raw) }
                pendingReplies -= 1
                return parse(UnsafePointer(raw.assumingMemoryBound(to: redisReply.self)))
            }
            let n: Int
            do throws(RedisError) {
                n = try socket.read(into: input, deadline: deadline)
            } catch {
                throw lost(error)
            }
            _ = redisReaderFeed(reader, input.baseAddress!.assumingMemoryBound(to: CChar.self), n)
        }
    }

    /// The connection's socket descriptor, for a caller's own `poll` (nil once closed): when it
    /// is readable, `receiveIfReady` until it returns nil.
    public var descriptor: Int32? { socket.map(\.descriptor) }

    /// The reply to the oldest command sent and not yet answered if it has arrived whole, handed
    /// to `parse` as `receive(parsing:)` does; nil, without waiting, when it has not (what has
    /// arrived of it is kept). Reads until the socket has nothing more, so that after a nil a
    /// `poll` on `descriptor` is a true test of whether more has come. For an event loop that
    /// waits on several connections at once (the worker's driver).
    public func receiveIfReady<T>(parsing parse: (UnsafePointer<redisReply>) -> T) throws(RedisError) -> T? {
        guard let socket else { throw notConnected() }
        if !output.isEmpty { try flush() }
        while true {
            var raw: UnsafeMutableRawPointer?
            if redisReaderGetReply(reader, &raw) != REDIS_OK {
                let message = withUnsafeBytes(of: reader.pointee.errstr) { raw -> String in
                    String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
                }
                throw lost(RedisError(.connection, "Redis at \(endpoint): protocol error: \(message)"))
            }
            if let raw {
                defer { freeReplyObject(raw) }
                pendingReplies -= 1
                return parse(UnsafePointer(raw.assumingMemoryBound(to: redisReply.self)))
            }
            let n: Int
            do throws(RedisError) {
                n = try socket.readAvailable(into: input)
            } catch {
                throw lost(error)
            }
            if n == 0 { return nil }
            _ = redisReaderFeed(reader, input.baseAddress!.assumingMemoryBound(to: CChar.self), n)
        }
    }

    /// A copy of hiredis's reply `r` (kept for the worker's parsers; `RedisReply(copying:)`).
    public static func convert(_ r: UnsafePointer<redisReply>) -> RedisReply { RedisReply(copying: r) }

    /// Closes the connection after `error` and returns it.
    func lost(_ error: RedisError) -> RedisError {
        close()
        return error
    }

    private func notConnected() -> RedisError {
        RedisError(.connection, "Redis at \(endpoint): not connected")
    }
}
