#if canImport(Glibc)
import Glibc
#endif
import PushTransport

/// A minimal HTTP/1.0 responder for `/metrics` (Prometheus text) and `/healthz`, on a thread
/// of its own, one request per connection. Hand-written on purpose: two fixed GET routes do not
/// justify an HTTP framework in the worker's build (CI rebuilds every package from scratch).
public final class MetricsServer: @unchecked Sendable {
    private let metrics: WorkerMetrics
    private let listener: Int32
    /// The port it listens on (useful when 0 was asked for).
    public let port: Int

    /// Listens on `host:port` (0: any free port) and starts serving.
    public init(metrics: WorkerMetrics, host: String, port: Int) throws(ConfigurationError) {
        self.metrics = metrics
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ConfigurationError("metrics: socket: \(String(cString: strerror(errno)))") }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = in_port_t(UInt16(port).bigEndian)
        guard inet_pton(AF_INET, host, &addr.sin_addr) == 1 else {
            close(fd)
            throw ConfigurationError("metrics: '\(host)' is not an IPv4 address")
        }
        let bound = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 16) == 0 else {
            let e = String(cString: strerror(errno))
            close(fd)
            throw ConfigurationError("metrics: cannot listen on \(host):\(port): \(e)")
        }
        var actual = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        listener = fd
        self.port = Int(UInt16(bigEndian: actual.sin_port))
        var thread = pthread_t()
        let context = Unmanaged.passRetained(self).toOpaque()
        pthread_create(&thread, nil, { arg in
            Unmanaged<MetricsServer>.fromOpaque(arg!).takeRetainedValue().serve()
            return nil
        }, context)
        pthread_detach(thread)
    }

    private func serve() {
        // A scraper that hangs up before reading its answer must not kill the worker.
        IOThread.blockSIGPIPE()
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                return
            }
            var timeout = timeval(tv_sec: 2, tv_usec: 0)
            setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            var buffer = [UInt8](repeating: 0, count: 2048)
            let n = read(client, &buffer, buffer.count)
            let request = n > 0 ? String(decoding: buffer.prefix(n), as: UTF8.self) : ""
            let firstLine = request.split(separator: "\r\n", maxSplits: 1).first.map(String.init) ?? ""
            let parts = firstLine.split(separator: " ")
            let path = parts.count >= 2 ? String(parts[1]) : ""
            let response: String
            if parts.first != "GET" {
                response = Self.response(405, "method not allowed\n", type: "text/plain")
            } else if path == "/metrics" {
                response = Self.response(200, metrics.render(), type: "text/plain; version=0.0.4")
            } else if path == "/healthz" {
                response = metrics.isLive(withinMillis: 10_000) ? Self.response(200, "ok\n", type: "text/plain")
                                                                 : Self.response(503, "the worker loop is stuck\n", type: "text/plain")
            } else {
                response = Self.response(404, "not found: try /metrics or /healthz\n", type: "text/plain")
            }
            var bytes = Array(response.utf8)
            var sent = 0
            while sent < bytes.count {
                let w = bytes.withUnsafeMutableBytes { write(client, $0.baseAddress! + sent, $0.count - sent) }
                if w <= 0 { break }
                sent += w
            }
            close(client)
        }
    }

    private static func response(_ status: Int, _ body: String, type: String) -> String {
        let text = [200: "OK", 404: "Not Found", 405: "Method Not Allowed", 503: "Service Unavailable"][status] ?? "Error"
        return "HTTP/1.0 \(status) \(text)\r\nContent-Type: \(type)\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)"
    }
}
