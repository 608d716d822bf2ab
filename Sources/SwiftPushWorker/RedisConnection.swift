#if canImport(Glibc)
import Glibc
#endif
import CHiredis

/// A reply from Redis, copied out of hiredis's reply tree (which is freed at once).
public enum RedisReply: Equatable, Sendable {
    /// A bulk string (binary-safe).
    case string([UInt8])
    /// A status reply such as `OK`.
    case status(String)
    /// An integer reply.
    case integer(Int64)
    /// An array reply (multi-bulk).
    case array([RedisReply])
    /// A nil bulk string or nil array.
    case null
    /// An error reply (`-ERR ...`): the command failed, the connection is still usable.
    case error(String)

    /// The bytes of a bulk string or status as text (UTF-8, lossy), nil otherwise.
    public var text: String? {
        switch self {
        case .string(let b): return String(decoding: b, as: UTF8.self)
        case .status(let s): return s
        default: return nil
        }
    }

    /// The elements of an array reply; empty for anything else (a nil array included).
    public var elements: [RedisReply] {
        if case .array(let a) = self { return a }
        return []
    }

    /// The value of an integer reply, or of a bulk string holding a decimal integer.
    public var integer: Int64? {
        switch self {
        case .integer(let n): return n
        case .string: return text.flatMap { Int64($0) }
        default: return nil
        }
    }
}

/// A command's arguments packed into one byte buffer, for the queue's big script calls: a batch
/// of 500 outcomes is some 15,000 arguments, and an array per argument showed in the profile.
public struct RedisArguments {
    fileprivate var bytes: [UInt8] = []
    fileprivate var ends: [Int] = []

    /// Empty arguments, with room for `bytes` bytes.
    public init(reservingBytes: Int = 0) { bytes.reserveCapacity(reservingBytes) }

    /// How many arguments there are.
    public var count: Int { ends.count }

    /// Appends one argument: the string's UTF-8 bytes.
    public mutating func append(_ text: String) {
        bytes.append(contentsOf: text.utf8)
        ends.append(bytes.count)
    }

    /// Appends one argument: these bytes.
    public mutating func append(_ raw: [UInt8]) {
        bytes.append(contentsOf: raw)
        ends.append(bytes.count)
    }

    /// Appends one argument: `value` in decimal (without building a String on the way).
    public mutating func append(integer value: Int64) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        let start = bytes.count
        repeat {
            bytes.append(UInt8(ascii: "0") + UInt8(magnitude % 10))
            magnitude /= 10
        } while magnitude > 0
        bytes[start...].reverse()
        ends.append(bytes.count)
    }

    /// The arguments as text (tests and messages).
    var strings: [String] {
        var start = 0
        return ends.map { end in
            defer { start = end }
            return String(decoding: bytes[start..<end], as: UTF8.self)
        }
    }

    /// Appends every argument of `other`.
    public mutating func append(contentsOf other: RedisArguments) {
        let base = bytes.count
        bytes.append(contentsOf: other.bytes)
        ends.append(contentsOf: other.ends.map { $0 + base })
    }

    /// Removes every argument, keeping the memory.
    public mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
        ends.removeAll(keepingCapacity: true)
    }
}

/// Why a Redis command did not produce a reply.
public struct RedisError: Error, CustomStringConvertible, Sendable {
    /// What went wrong, as hiredis or the server said it.
    public let description: String
    /// True when the connection is unusable (I/O error, EOF, protocol error, timeout): the caller
    /// reconnects. False for an error reply, after which the connection can be used again.
    public let connectionLost: Bool
}

/// One synchronous connection to Redis through hiredis (`redisCommandArgv` and, for pipelines,
/// `redisAppendCommandArgv` + `redisGetReply`). Every argument is binary-safe: nothing is
/// formatted through hiredis's printf-like interface, so no field value is ever interpreted.
///
/// Not thread-safe: one owner at a time (the worker's loop, or a CLI command).
public final class RedisConnection {
    private var context: UnsafeMutablePointer<redisContext>?
    /// Where it is connected, for messages.
    public let endpoint: String

    /// Connects to `host:port` within `timeoutMillis`; commands then time out after
    /// `commandTimeoutMillis` (which must exceed any BLOCK the caller uses).
    public init(host: String, port: Int, timeoutMillis: Int = 5000, commandTimeoutMillis: Int = 10_000) throws(RedisError) {
        endpoint = "\(host):\(port)"
        let tv = timeval(tv_sec: timeoutMillis / 1000, tv_usec: (timeoutMillis % 1000) * 1000)
        guard let c = redisConnectWithTimeout(host, Int32(port), tv) else {
            throw RedisError(description: "cannot allocate a Redis context", connectionLost: true)
        }
        if c.pointee.err != 0 {
            let message = Self.contextError(c)
            redisFree(c)
            throw RedisError(description: "cannot connect to Redis at \(endpoint): \(message)", connectionLost: true)
        }
        let ctv = timeval(tv_sec: commandTimeoutMillis / 1000, tv_usec: (commandTimeoutMillis % 1000) * 1000)
        _ = redisSetTimeout(c, ctv)
        context = c
    }

    deinit { if let context { redisFree(context) } }

    /// Runs one command and returns its reply (an error reply is returned, not thrown).
    public func command(_ args: [[UInt8]]) throws(RedisError) -> RedisReply {
        try pipeline([args])[0]
    }

    /// Runs one command given as strings.
    public func command(_ args: String...) throws(RedisError) -> RedisReply {
        try command(args.map { Array($0.utf8) })
    }

    /// Sends every command in one write and reads their replies in order (one round trip).
    public func pipeline(_ commands: [[[UInt8]]]) throws(RedisError) -> [RedisReply] {
        guard let c = context else { throw RedisError(description: "not connected to Redis", connectionLost: true) }
        for args in commands {
            let rc = Self.withArgv(args) { argc, argv, lengths in redisAppendCommandArgv(c, argc, argv, lengths) }
            if rc != REDIS_OK { throw lost(c) }
        }
        var replies: [RedisReply] = []
        replies.reserveCapacity(commands.count)
        for _ in commands {
            var raw: UnsafeMutableRawPointer?
            if redisGetReply(c, &raw) != REDIS_OK || raw == nil { throw lost(c) }
            replies.append(Self.convert(UnsafePointer(raw!.assumingMemoryBound(to: redisReply.self))))
            freeReplyObject(raw)
        }
        return replies
    }

    /// Runs one command whose arguments are packed in `args`.
    public func command(_ args: RedisArguments) throws(RedisError) -> RedisReply {
        try send(args)
        return try receive()
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
        guard let c = context else { throw RedisError(description: "not connected to Redis", connectionLost: true) }
        let n = args.ends.count
        let argv = UnsafeMutablePointer<UnsafePointer<CChar>?>.allocate(capacity: max(n, 1))
        let lengths = UnsafeMutablePointer<Int>.allocate(capacity: max(n, 1))
        defer { argv.deallocate(); lengths.deallocate() }
        // Arguments that are all empty still need a valid base pointer: give them one byte.
        let bytes = args.bytes.isEmpty ? [0] : args.bytes
        let rc = bytes.withUnsafeBufferPointer { buffer -> Int32 in
            let base = UnsafeRawPointer(buffer.baseAddress!)
            var start = 0
            for i in 0..<n {
                argv[i] = (base + start).assumingMemoryBound(to: CChar.self)
                lengths[i] = args.ends[i] - start
                start = args.ends[i]
            }
            return redisAppendCommandArgv(c, Int32(n), argv, lengths)
        }
        if rc != REDIS_OK { throw lost(c) }
    }

    /// Writes every command appended (hiredis would only write on the next read): Redis starts
    /// at once.
    public func flush() throws(RedisError) {
        guard let c = context else { throw RedisError(description: "not connected to Redis", connectionLost: true) }
        var done: Int32 = 0
        while done == 0 {
            if redisBufferWrite(c, &done) != REDIS_OK { throw lost(c) }
        }
    }

    /// The reply to the oldest command sent and not yet answered (waits for it).
    public func receive() throws(RedisError) -> RedisReply {
        try receive(parsing: Self.convert)
    }

    /// The reply to the oldest command sent and not yet answered, handed to `parse` as hiredis's
    /// own tree (valid during the call only) instead of being copied into a `RedisReply`: for
    /// the big replies of the hot path (a batch of stream entries), where copying every string
    /// into an array of its own showed in the worker's profile.
    public func receive<T>(parsing parse: (UnsafePointer<redisReply>) -> T) throws(RedisError) -> T {
        guard let c = context else { throw RedisError(description: "not connected to Redis", connectionLost: true) }
        var raw: UnsafeMutableRawPointer?
        if redisGetReply(c, &raw) != REDIS_OK || raw == nil { throw lost(c) }
        defer { freeReplyObject(raw) }
        return parse(UnsafePointer(raw!.assumingMemoryBound(to: redisReply.self)))
    }

    /// Marks the connection unusable and describes why.
    private func lost(_ c: UnsafeMutablePointer<redisContext>) -> RedisError {
        let message = Self.contextError(c)
        redisFree(c)
        context = nil
        return RedisError(description: "Redis at \(endpoint): \(message)", connectionLost: true)
    }

    private static func contextError(_ c: UnsafeMutablePointer<redisContext>) -> String {
        let text = withUnsafeBytes(of: c.pointee.errstr) { raw -> String in
            let n = raw.firstIndex(of: 0) ?? raw.count
            return String(decoding: raw.prefix(n), as: UTF8.self)
        }
        if c.pointee.err == REDIS_ERR_EOF { return "connection closed by the server" }
        return text.isEmpty ? "error \(c.pointee.err)" : text
    }

    /// Calls `body` with C argv/argvlen arrays pointing into `args` (valid during the call).
    private static func withArgv(_ args: [[UInt8]], _ body: (Int32, UnsafeMutablePointer<UnsafePointer<CChar>?>, UnsafePointer<Int>) -> Int32) -> Int32 {
        let argv = UnsafeMutablePointer<UnsafePointer<CChar>?>.allocate(capacity: args.count)
        let lengths = UnsafeMutablePointer<Int>.allocate(capacity: args.count)
        // One contiguous copy of every argument keeps the pointers valid for the whole call.
        let total = args.reduce(0) { $0 + $1.count } + 1
        let storage = UnsafeMutablePointer<UInt8>.allocate(capacity: total)
        defer { argv.deallocate(); lengths.deallocate(); storage.deallocate() }
        var at = 0
        for (i, a) in args.enumerated() {
            a.withUnsafeBufferPointer { b in
                if let base = b.baseAddress { (storage + at).update(from: base, count: b.count) }
            }
            argv[i] = UnsafeRawPointer(storage + at).assumingMemoryBound(to: CChar.self)
            lengths[i] = a.count
            at += a.count
        }
        return body(Int32(args.count), argv, lengths)
    }

    /// A copy of hiredis's reply `r`.
    static func convert(_ r: UnsafePointer<redisReply>) -> RedisReply {
        let p = r.pointee
        switch p.type {
        case REDIS_REPLY_STRING:
            return .string(p.str.map { Array(UnsafeRawBufferPointer(start: $0, count: Int(p.len))) } ?? [])
        case REDIS_REPLY_STATUS:
            return .status(p.str.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: Int(p.len)), as: UTF8.self) } ?? "")
        case REDIS_REPLY_ERROR:
            return .error(p.str.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: Int(p.len)), as: UTF8.self) } ?? "")
        case REDIS_REPLY_INTEGER:
            return .integer(Int64(p.integer))
        case REDIS_REPLY_ARRAY:
            var items: [RedisReply] = []
            items.reserveCapacity(Int(p.elements))
            for i in 0..<Int(p.elements) { items.append(convert(UnsafePointer(p.element[i]!))) }
            return .array(items)
        default:
            return .null
        }
    }
}
