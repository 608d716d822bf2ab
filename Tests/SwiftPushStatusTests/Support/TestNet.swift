import Foundation
import PushCore
#if canImport(Glibc)
import Glibc
#endif

/// Loopback sockets for the tests: free ports, and a raw HTTP client that writes exactly the
/// bytes a test gives it (half a request, a request in two parts), with time-bounded reads.
enum TestNet {
    /// A TCP port nothing listens on now (bound to port 0, then released).
    static func freePort() -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var a = loopback(port: 0)
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) } }
        _ = withUnsafeMutablePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) } }
        return Int(UInt16(bigEndian: a.sin_port))
    }

    static func loopback(port: Int) -> sockaddr_in {
        var a = sockaddr_in()
        a.sin_family = sa_family_t(AF_INET)
        a.sin_port = in_port_t(UInt16(port).bigEndian)
        a.sin_addr.s_addr = inet_addr("127.0.0.1")
        return a
    }
}

/// One TCP connection to 127.0.0.1:port (TCP_NODELAY: each `send` leaves as its own segment).
final class RawConnection {
    let fd: Int32
    private var buffered: [UInt8] = []

    init(port: Int) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        var a = TestNet.loopback(port: port)
        let rc = withUnsafePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard rc == 0 else { close(fd); throw TestFailure("connect to \(port): errno \(errno)") }
    }

    deinit { close(fd) }

    /// Writes all of `text`.
    func send(_ text: String) {
        let bytes = Array(text.utf8)
        var sent = 0
        while sent < bytes.count {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + sent, $0.count - sent) }
            if n <= 0 { return }
            sent += n
        }
    }

    /// Whether bytes arrive within `millis` (without taking them).
    func hasData(withinMillis millis: Int32) -> Bool {
        if !buffered.isEmpty { return true }
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&p, 1, millis) > 0
    }

    /// Reads one HTTP/1.1 response (status line, headers, a Content-Length body) within
    /// `millis`; nil if it did not come whole by then.
    func response(withinMillis millis: Int = 5000) -> (status: Int, headers: [String: String], body: String)? {
        let deadline = MonotonicTime.nanos() + UInt64(millis) * 1_000_000
        while true {
            if let end = headerEnd() {
                let head = String(decoding: buffered[..<end], as: UTF8.self)
                let lines = head.components(separatedBy: "\r\n")
                let status = Int(lines[0].split(separator: " ").dropFirst().first ?? "") ?? 0
                var headers: [String: String] = [:]
                for line in lines.dropFirst() {
                    guard let colon = line.firstIndex(of: ":") else { continue }
                    headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                }
                let length = Int(headers["content-length"] ?? "0") ?? 0
                if buffered.count >= end + 4 + length {
                    let body = String(decoding: buffered[(end + 4)..<(end + 4 + length)], as: UTF8.self)
                    buffered.removeFirst(end + 4 + length)
                    return (status, headers, body)
                }
            }
            guard readMore(until: deadline) else { return nil }
        }
    }

    /// Reads until `text` has arrived (it and what came before are taken) within `millis`;
    /// what was read, nil on timeout or close.
    func read(through text: String, withinMillis millis: Int = 5000) -> String? {
        let deadline = MonotonicTime.nanos() + UInt64(millis) * 1_000_000
        let needle = Array(text.utf8)
        while true {
            if let at = find(needle) {
                let taken = String(decoding: buffered[..<(at + needle.count)], as: UTF8.self)
                buffered.removeFirst(at + needle.count)
                return taken
            }
            guard readMore(until: deadline) else { return nil }
        }
    }

    /// Whether the server closed the connection within `millis` (EOF).
    func closedByPeer(withinMillis millis: Int32) -> Bool {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&p, 1, millis) > 0 else { return false }
        var byte: UInt8 = 0
        return recv(fd, &byte, 1, Int32(MSG_PEEK)) == 0
    }

    private func readMore(until deadline: UInt64) -> Bool {
        let now = MonotonicTime.nanos()
        guard now < deadline else { return false }
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&p, 1, Int32((deadline - now) / 1_000_000) + 1) > 0 else { return false }
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let n = Glibc.read(fd, &chunk, chunk.count)
        guard n > 0 else { return false }
        buffered += chunk.prefix(n)
        return true
    }

    private func headerEnd() -> Int? { find(Array("\r\n\r\n".utf8)) }

    private func find(_ needle: [UInt8]) -> Int? {
        guard buffered.count >= needle.count else { return nil }
        for i in 0...(buffered.count - needle.count) where buffered[i] == needle[0] {
            if Array(buffered[i..<(i + needle.count)]) == needle { return i }
        }
        return nil
    }
}
