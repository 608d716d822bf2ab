#if canImport(Glibc)
import Glibc
#endif
import PushCore
import CPushSystem

/// Resolving and connecting TCP sockets without blocking the event loop on the connect.
public enum SocketConnect {
    /// One resolved address (a value of PushCore, so that the client's machine passes
    /// addresses on without depending on this module).
    public typealias Address = SocketAddress

    /// Resolves `host` afresh (no cache: Apple asks providers to resolve for each new connection
    /// and spread connections over the addresses returned).
    public static func resolve(host: String, port: Int) throws(TransportError) -> [Address] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_ADDRCONFIG
        var result: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(host, String(port), &hints, &result)
        guard rc == 0, let first = result else {
            throw TransportError(.connect, "cannot resolve \(host): \(String(cString: gai_strerror(rc)))")
        }
        defer { freeaddrinfo(first) }
        var out: [Address] = []
        var p: UnsafeMutablePointer<addrinfo>? = first
        while let ai = p {
            var a = Address(storage: sockaddr_storage(), length: ai.pointee.ai_addrlen)
            withUnsafeMutableBytes(of: &a.storage) { dst in
                dst.copyMemory(from: UnsafeRawBufferPointer(start: ai.pointee.ai_addr, count: Int(ai.pointee.ai_addrlen)))
            }
            out.append(a)
            p = ai.pointee.ai_next
        }
        return out
    }

    /// Starts a non-blocking connect; the socket becomes writable when it completes (check
    /// SO_ERROR then). Sets TCP_NODELAY and keepalive.
    public static func start(_ address: Address) throws(TransportError) -> Int32 {
        let fd = socket(address.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        if fd < 0 { throw TransportError.system("socket", errno) }
        configure(fd)
        var a = address
        let rc = withUnsafePointer(to: &a.storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, a.length) }
        }
        if rc != 0 && errno != EINPROGRESS {
            let e = errno
            close(fd)
            throw TransportError(.connect, "connect: \(String(cString: strerror(e)))")
        }
        return fd
    }

    /// Starts a connection to the first of `addresses` that takes one, removing each address
    /// tried from the list (what remains is there to fall back on). Throws the last error when
    /// none does (e.g. IPv6 with no route, then an IPv4 refused at once).
    package static func startFirst(of addresses: inout [Address]) throws(TransportError) -> Int32 {
        var lastError = TransportError(.connect, "no address to connect to")
        while !addresses.isEmpty {
            do throws(TransportError) {
                return try start(addresses.removeFirst())
            } catch {
                lastError = error
            }
        }
        throw lastError
    }

    /// TCP_NODELAY (frames are batched by us already) and keepalive probes after 60 s idle.
    public static func configure(_ fd: Int32) {
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, socklen_t(MemoryLayout<Int32>.size))
        var idle: Int32 = 60, interval: Int32 = 10, count: Int32 = 6
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_KEEPIDLE, &idle, socklen_t(MemoryLayout<Int32>.size))
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_KEEPINTVL, &interval, socklen_t(MemoryLayout<Int32>.size))
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_KEEPCNT, &count, socklen_t(MemoryLayout<Int32>.size))
    }

    /// True when `host` is an IPv4 or IPv6 literal (no SNI then; verify the IP instead).
    public static func isIPLiteral(_ host: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
    }
}
