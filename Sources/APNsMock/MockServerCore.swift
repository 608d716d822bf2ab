#if canImport(Glibc)
import Glibc
#endif
import COpenSSL
import PushCore
import PushTransport

/// Everything the mock's I/O thread owns: the event loop, the listening socket, the open
/// connections, and the read-only settings they share.
///
/// Made on the starting thread, then handed to the I/O thread, which alone touches it from
/// then on; the only exception is `requestStop()`, which goes through `lock` and the loop's
/// thread-safe `wake()`.
final class MockServerCore: @unchecked Sendable {
    let loop: EventLoop
    let tls: TLSContext
    let verifier: JWTVerifier
    let recorder: MockStatsRecorder
    let clock: any PushClock
    let maxConcurrentStreams: Int
    let unregisteredDeviceTokens: [String: Int64]
    /// The bound port.
    let port: Int

    private var listener: MockListener?
    /// Open connections by descriptor, so that they can be closed on stop.
    private var connections: [Int32: MockConnection] = [:]
    private let lock = PThreadMutex()
    private var stopRequested = false

    init(configuration c: MockServer.Configuration, recorder: MockStatsRecorder) throws(MockServer.StartError) {
        guard c.maxConcurrentStreams >= 1 else { throw MockServer.StartError("maxConcurrentStreams must be at least 1") }
        do throws(TransportError) {
            tls = try TLSContext.server(certificateChainFile: c.certificateChainFile, keyFile: c.privateKeyFile)
            if let ca = c.clientCAFile { try tls.requireClientCertificates(caFile: ca) }
            loop = try EventLoop()
        } catch {
            throw MockServer.StartError(error.description)
        }
        verifier = try JWTVerifier(keys: c.tokenKeys, maxAgeSeconds: c.tokenMaxAgeSeconds)
        self.recorder = recorder
        clock = c.clock
        maxConcurrentStreams = c.maxConcurrentStreams
        unregisteredDeviceTokens = Dictionary(c.unregisteredDeviceTokens.map { ($0.key.lowercased(), $0.value) },
                                              uniquingKeysWith: { a, _ in a })
        let (fd, port) = try Self.listen(host: c.host, port: c.port)
        self.port = port
        listener = MockListener(fd: fd, core: self)
        loop.register(fd: fd, interest: EventLoop.readable, handler: listener!)
    }

    /// Binds and listens on `host:port` with a non-blocking socket; returns it and the port.
    private static func listen(host: String, port: Int) throws(MockServer.StartError) -> (Int32, Int) {
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
        guard (0...65535).contains(port) else { throw MockServer.StartError("port out of range: \(port)") }
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

    // MARK: - The I/O thread

    /// The I/O thread's body: serve until `requestStop()`, then close everything.
    func run() {
        while true {
            if loop.runOnce(timeoutMillis: -1), lock.withLock({ stopRequested }) { break }
        }
        discard()
    }

    /// Asks the I/O thread to finish. Safe from any thread.
    func requestStop() {
        lock.withLock { stopRequested = true }
        loop.wake()
    }

    /// Closes the listening socket and every connection (on the I/O thread, or before it ran).
    func discard() {
        if let listener {
            loop.unregister(fd: listener.fd)
            close(listener.fd)
            self.listener = nil
        }
        for connection in Array(connections.values) { connection.close(nil) }
        connections.removeAll()
    }

    /// Takes an accepted, non-blocking socket and starts TLS on it.
    func accept(fd: Int32) {
        SocketConnect.configure(fd)
        guard let ssl = SSL_new(tls.ctx) else {
            close(fd)
            return
        }
        SSL_set_fd(ssl, fd)
        SSL_set_accept_state(ssl)
        recorder.connectionOpened()
        connections[fd] = MockConnection(core: self, fd: fd, ssl: ssl)
    }

    /// A connection closed: forget it.
    func connectionClosed(fd: Int32) {
        connections[fd] = nil
        recorder.connectionClosed()
    }
}

/// The listening socket: accepts every pending connection when readable.
final class MockListener: EventHandler {
    let fd: Int32
    private unowned let core: MockServerCore

    init(fd: Int32, core: MockServerCore) {
        self.fd = fd
        self.core = core
    }

    func handleEvents(_ events: UInt32) {
        while true {
            // accept4 needs _GNU_SOURCE, which Swift's Glibc module lacks: set the flags after.
            let client = accept(fd, nil, nil)
            if client < 0 {
                // EAGAIN: drained. EMFILE and friends: try again on the next readiness; the
                // pending connection waits in the backlog.
                return
            }
            _ = fcntl(client, F_SETFD, FD_CLOEXEC)
            _ = fcntl(client, F_SETFL, fcntl(client, F_GETFL) | O_NONBLOCK)
            core.accept(fd: client)
        }
    }
}
