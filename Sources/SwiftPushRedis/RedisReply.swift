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

    /// The text of an error reply, nil for any other reply.
    public var errorText: String? {
        if case .error(let e) = self { return e }
        return nil
    }

    /// A copy of hiredis's reply `r` (the tree stays the caller's to free).
    public init(copying r: UnsafePointer<redisReply>) {
        let p = r.pointee
        switch p.type {
        case REDIS_REPLY_STRING:
            self = .string(p.str.map { Array(UnsafeRawBufferPointer(start: $0, count: Int(p.len))) } ?? [])
        case REDIS_REPLY_STATUS:
            self = .status(p.str.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: Int(p.len)), as: UTF8.self) } ?? "")
        case REDIS_REPLY_ERROR:
            self = .error(p.str.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: Int(p.len)), as: UTF8.self) } ?? "")
        case REDIS_REPLY_INTEGER:
            self = .integer(Int64(p.integer))
        case REDIS_REPLY_ARRAY:
            var items: [RedisReply] = []
            items.reserveCapacity(Int(p.elements))
            for i in 0..<Int(p.elements) { items.append(RedisReply(copying: UnsafePointer(p.element[i]!))) }
            self = .array(items)
        default:
            self = .null
        }
    }
}
