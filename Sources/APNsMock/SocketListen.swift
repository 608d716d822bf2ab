#if canImport(Glibc)
import Glibc
#endif

/// Listening sockets for the mock and its control interface.
enum SocketListen {
    /// Binds and listens on `host:port` (an IP literal; port 0 picks a free one) with a
    /// non-blocking socket; returns it and the bound port. SO_REUSEADDR lets a test stop a
    /// server and start another on the same port at once, despite connections in TIME_WAIT.
    static func listen(host: String, port: Int) throws(MockServer.StartError) -> (Int32, Int) {
        guard (0...65535).contains(port) else { throw MockServer.StartError("port out of range: \(port)") }
        var storage = sockaddr_storage()
        var length: socklen_t
        var v4 = in_addr(), v6 = in6_addr()
        if inet_pton(AF_INET, host, &v4) == 1 {
            var sin = sockaddr_in()
            sin.sin_family = sa_family_t(AF_INET)
            sin.sin_port = in_port_t(UInt16(truncatingIfNeeded: port).bigEndian)
            sin.sin_addr = v4
            length = socklen_t(MemoryLayout<sockaddr_in>.size)
            withUnsafeMutableBytes(of: &storage) { $0.storeBytes(of: sin, as: sockaddr_in.self) }
        } else if inet_pton(AF_INET6, host, &v6) == 1 {
            var sin6 = sockaddr_in6()
            sin6.sin6_family = sa_family_t(AF_INET6)
            sin6.sin6_port = in_port_t(UInt16(truncatingIfNeeded: port).bigEndian)
            sin6.sin6_addr = v6
            length = socklen_t(MemoryLayout<sockaddr_in6>.size)
            withUnsafeMutableBytes(of: &storage) { $0.storeBytes(of: sin6, as: sockaddr_in6.self) }
        } else {
            throw MockServer.StartError("host must be an IP address literal, got \(host)")
        }
        let fd = socket(Int32(storage.ss_family),
                        Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw MockServer.StartError("socket: \(String(cString: strerror(errno)))") }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        let bound = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0, Glibc.listen(fd, 1024) == 0 else {
            let e = errno
            close(fd)
            throw MockServer.StartError("cannot listen on \(host):\(port): \(String(cString: strerror(e)))")
        }
        var actual = sockaddr_storage()
        var actualLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &actualLength) }
        }
        let bigEndianPort: UInt16 = withUnsafeBytes(of: &actual) { raw in
            // sin_port and sin6_port sit at the same offset (2) in both layouts.
            raw.load(fromByteOffset: 2, as: UInt16.self)
        }
        return (fd, Int(UInt16(bigEndian: bigEndianPort)))
    }
}
