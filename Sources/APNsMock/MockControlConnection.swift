#if canImport(Glibc)
import Glibc
#endif
import PushTransport

/// One connection to the control interface: a tiny HTTP/1.1 server (one request per
/// connection, `Connection: close`), served on the mock's own event loop.
///
/// Implementation: requests are a few hundred bytes of JSON at most, so the parser only finds
/// the end of the header block, the request line and `Content-Length`; anything else is
/// ignored. The answer (possibly large: `GET /record`) is written as the socket accepts it.
final class MockControlConnection: EventHandler {
    let fd: Int32
    private unowned let core: MockServerCore
    private var input: [UInt8] = []
    private var output: [UInt8] = []
    private var sent = 0
    private var responding = false
    private var closed = false

    /// Longest header block and body accepted.
    private static let maxHeaderBytes = 16 * 1024
    private static let maxBodyBytes = 1 << 20

    init(core: MockServerCore, fd: Int32) {
        self.core = core
        self.fd = fd
        core.loop.register(fd: fd, interest: EventLoop.readable, handler: self)
    }

    func handleEvents(_ events: UInt32) {
        if !responding { readRequest() }
        if responding, !closed { writeResponse() }
    }

    private func readRequest() {
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n > 0 {
                input += chunk[0..<n]
                if input.count > Self.maxHeaderBytes + Self.maxBodyBytes {
                    respond(status: 413, MockControl.error("request too large"))
                    return
                }
                continue
            }
            if n < 0, errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { break }
            // End of input (or an error) before a whole request: nothing to answer.
            if !tryParse() { close() }
            return
        }
        _ = tryParse()
    }

    /// Answers once a whole request is in; false when more input is needed.
    @discardableResult
    private func tryParse() -> Bool {
        guard let end = Self.find([13, 10, 13, 10], in: input) else {
            if input.count > Self.maxHeaderBytes { respond(status: 431, MockControl.error("header block too large")); return true }
            return false
        }
        let head = String(decoding: input[..<end], as: UTF8.self)
        let lines = head.split(separator: "\r\n", omittingEmptySubsequences: false)
        let requestLine = lines.first.map(String.init) ?? ""
        let parts = requestLine.split(separator: " ")
        guard parts.count == 3, parts[2].hasPrefix("HTTP/1.") else {
            respond(status: 400, MockControl.error("malformed request line"))
            return true
        }
        var length = 0
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            if line[..<colon].lowercased() == "content-length" {
                guard let n = Int(line[line.index(after: colon)...].trimmingSpaces), n >= 0, n <= Self.maxBodyBytes else {
                    respond(status: 413, MockControl.error("bad or too large Content-Length"))
                    return true
                }
                length = n
            }
        }
        let bodyStart = end + 4
        guard input.count >= bodyStart + length else { return false }
        var path = String(parts[1])
        if let q = path.firstIndex(of: "?") { path = String(path[..<q]) }
        let (status, body) = MockControl.handle(method: String(parts[0]), path: path,
                                                body: Array(input[bodyStart..<(bodyStart + length)]), core: core)
        respond(status: status, body)
        return true
    }

    private func respond(status: Int, _ body: [UInt8]) {
        let text: String
        switch status {
        case 200: text = "OK"
        case 400: text = "Bad Request"
        case 404: text = "Not Found"
        case 405: text = "Method Not Allowed"
        case 413: text = "Payload Too Large"
        case 431: text = "Request Header Fields Too Large"
        default: text = "Error"
        }
        output = Array("HTTP/1.1 \(status) \(text)\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n".utf8) + body
        sent = 0
        responding = true
        core.loop.modify(fd: fd, interest: EventLoop.writable)
    }

    private func writeResponse() {
        while sent < output.count {
            let n = output.withUnsafeBytes { send(fd, $0.baseAddress! + sent, output.count - sent, Int32(MSG_NOSIGNAL)) }
            if n > 0 {
                sent += n
                continue
            }
            if n < 0, errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { return }
            break
        }
        close()
    }

    func close() {
        guard !closed else { return }
        closed = true
        core.loop.unregister(fd: fd)
        Glibc.close(fd)
        core.controlConnectionClosed(self)
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for i in 0...(haystack.count - needle.count) where haystack[i] == needle[0] {
            if haystack[i..<(i + needle.count)].elementsEqual(needle) { return i }
        }
        return nil
    }
}

extension Substring {
    /// Without leading and trailing spaces and tabs.
    var trimmingSpaces: Substring {
        var s = self
        while let f = s.first, f == " " || f == "\t" { s = s.dropFirst() }
        while let l = s.last, l == " " || l == "\t" { s = s.dropLast() }
        return s
    }
}
