import COpenSSL

/// Reads (and clears) OpenSSL's thread-local error queue into one line of text.
public enum OpenSSLError {
    /// The queued OpenSSL errors joined with "; ", or `fallback` when the queue is empty.
    public static func drain(fallback: String = "unknown OpenSSL error") -> String {
        var parts: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            var buf = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buf, buf.count)
            let text = String(decoding: buf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            // "error:0A000086:SSL routines::certificate verify failed" -> keep the part people read.
            let readable = text.split(separator: ":", omittingEmptySubsequences: false).last.map(String.init) ?? text
            if !parts.contains(readable) { parts.append(readable) }
        }
        return parts.isEmpty ? fallback : parts.joined(separator: "; ")
    }

    /// Discards queued errors (before an operation whose errors we want to read alone).
    public static func clear() { ERR_clear_error() }
}
