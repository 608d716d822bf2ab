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
            let reply = raw!.assumingMemoryBound(to: redisReply.self)
            replies.append(Self.convert(reply))
            freeReplyObject(raw)
        }
        return replies
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

    private static func convert(_ r: UnsafeMutablePointer<redisReply>) -> RedisReply {
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
            for i in 0..<Int(p.elements) { items.append(convert(p.element[i]!)) }
            return .array(items)
        default:
            return .null
        }
    }
}
