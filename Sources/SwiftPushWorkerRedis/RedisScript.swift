import COpenSSL

/// A Lua script run by its SHA-1 (`EVALSHA`), so a batch call does not resend the script's text;
/// when Redis does not know it yet (a new or restarted server, `SCRIPT FLUSH`), the queue runs it
/// once with `EVAL`, which also caches it (the pattern redis-py's `Script` uses).
struct RedisScript {
    /// The Lua text.
    let body: String
    /// Lowercase hex SHA-1 of `body`: the name Redis caches it under.
    let sha: String

    /// The script `body`.
    init(_ body: String) {
        self.body = body
        var digest = [UInt8](repeating: 0, count: 20)
        let bytes = Array(body.utf8)
        bytes.withUnsafeBufferPointer { b in _ = SHA1(b.baseAddress, b.count, &digest) }
        let hex = Array("0123456789abcdef".utf8)
        sha = String(decoding: digest.flatMap { [hex[Int($0 >> 4)], hex[Int($0 & 0xF)]] }, as: UTF8.self)
    }
}
