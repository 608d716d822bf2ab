#if canImport(Glibc)
import Glibc
#endif
import COpenSSL
import PushCore
import PushTransport

/// Everything the mock's I/O thread owns: the event loop, the listening sockets, the open
/// connections (their pumps), the fault state, the clock and the timers, and the settings they
/// share (`MockSettings`, made once from the configuration).
///
/// Made on the starting thread, then handed to the I/O thread, which alone touches it from
/// then on. Other threads reach it only through `requestStop()` (a lock and the loop's
/// thread-safe `wake()`), the `FaultMailbox` and the `MockLedger`.
final class MockServerCore: @unchecked Sendable {
    let loop: EventLoop
    let tls: TLSContext
    /// The configuration as the I/O thread uses it.
    let settings: MockSettings
    let ledger: MockLedger
    let mailbox: FaultMailbox
    /// The faults as the I/O thread applies them.
    let faults: FaultState
    /// The server's clock, as the I/O thread reads it.
    let clock: MockClock
    let timers: MockTimers
    /// The bound port, and the control interface's (0: none).
    let port: Int
    let controlPort: Int
    /// The channel management listener's port (0: none).
    let channelManagementPort: Int

    private var listener: MockListener?
    private var controlListener: MockListener?
    private var managementListener: MockListener?
    /// Open connections by descriptor, so that they can be closed on stop.
    private var connections: [Int32: MockPump] = [:]
    private var controlConnections: [Int32: MockControlConnection] = [:]
    private var nextSerial = 0
    private let lock = PThreadMutex()
    private var stopRequested = false

    init(configuration c: MockServer.Configuration, ledger: MockLedger, mailbox: FaultMailbox) throws(MockServer.StartError) {
        guard c.maxConcurrentStreams >= 1, c.maxConcurrentStreams <= Int(Int32.max) else {
            throw MockServer.StartError("maxConcurrentStreams must be in 1...\(Int32.max)")
        }
        do throws(TransportError) {
            tls = try TLSContext.server(certificateChainFile: c.certificateChainFile, keyFile: c.privateKeyFile)
            if let ca = c.clientCAFile {
                try tls.requireClientCertificates(caFile: ca)
                // With token keys as well, a certificate is optional: connections without one
                // authenticate with tokens (a presented certificate is still verified).
                if !c.tokenKeys.isEmpty { SSL_CTX_set_verify(tls.ctx, SSL_VERIFY_PEER, nil) }
            }
            loop = try EventLoop()
        } catch {
            throw MockServer.StartError(error.description)
        }
        settings = MockSettings(c, verifier: try JWTVerifier(keys: c.tokenKeys, maxAgeSeconds: c.tokenMaxAgeSeconds))
        self.ledger = ledger
        self.mailbox = mailbox
        faults = FaultState(mailbox: mailbox)
        clock = MockClock(c.clock)
        timers = MockTimers(clock: clock)

        let (fd, port) = try SocketListen.listen(host: c.host, port: c.port)
        self.port = port
        var controlFD: Int32 = -1
        var boundControlPort = 0
        if let requested = c.controlPort {
            do throws(MockServer.StartError) {
                (controlFD, boundControlPort) = try SocketListen.listen(host: "127.0.0.1", port: requested)
            } catch {
                close(fd)
                throw MockServer.StartError("control interface: " + error.description)
            }
        }
        controlPort = boundControlPort
        var managementFD: Int32 = -1
        var boundManagementPort = 0
        if let requested = c.channelManagementPort {
            do throws(MockServer.StartError) {
                (managementFD, boundManagementPort) = try SocketListen.listen(host: c.host, port: requested)
            } catch {
                close(fd)
                if controlFD >= 0 { close(controlFD) }
                throw MockServer.StartError("channel management listener: " + error.description)
            }
        }
        channelManagementPort = boundManagementPort
        if managementFD >= 0 {
            managementListener = MockListener(fd: managementFD) { [unowned self] client in self.accept(fd: client, role: .channelManagement) }
            loop.register(fd: managementFD, interest: EventLoop.readable, handler: managementListener!)
        }
        listener = MockListener(fd: fd) { [unowned self] client in self.accept(fd: client) }
        loop.register(fd: fd, interest: EventLoop.readable, handler: listener!)
        if controlFD >= 0 {
            controlListener = MockListener(fd: controlFD) { [unowned self] client in self.acceptControl(fd: client) }
            loop.register(fd: controlFD, interest: EventLoop.readable, handler: controlListener!)
        }
    }

    // MARK: - The I/O thread

    /// The I/O thread's body: serve until `requestStop()`, then close everything.
    func run() {
        IOThread.blockSIGPIPE() // a client that vanishes must not kill the process with SIGPIPE
        while true {
            let woken = loop.runOnce(timeoutMillis: timers.waitMillis())
            if !timers.isEmpty { timers.fireDue() }
            if woken, lock.withLock({ stopRequested }) { break }
        }
        discard()
    }

    /// Asks the I/O thread to finish. Safe from any thread.
    func requestStop() {
        lock.withLock { stopRequested = true }
        loop.wake()
    }

    /// Closes the listening sockets and every connection at once (on the I/O thread, or
    /// before it ran): clients see their connections drop, as when a server dies.
    func discard() {
        for l in [listener, controlListener, managementListener].compactMap({ $0 }) {
            loop.unregister(fd: l.fd)
            close(l.fd)
        }
        listener = nil
        controlListener = nil
        managementListener = nil
        timers.removeAll()
        for connection in Array(connections.values) { connection.close() }
        connections.removeAll()
        for c in Array(controlConnections.values) { c.close() }
        controlConnections.removeAll()
    }

    /// Takes an accepted, non-blocking socket and starts TLS on it, unless connections are
    /// being refused.
    private func accept(fd: Int32, role: MockListener.Role = .apns) {
        faults.refresh()
        if let until = faults.faults.refuseConnectionsUntil, clock.currentMonotonicNanos() < until {
            close(fd)
            ledger.connectionRefused()
            return
        }
        SocketConnect.configure(fd)
        guard let ssl = SSL_new(tls.ctx) else {
            close(fd)
            return
        }
        SSL_set_fd(ssl, fd)
        SSL_set_accept_state(ssl)
        ledger.connectionOpened()
        nextSerial += 1
        connections[fd] = MockPump(core: self, fd: fd, ssl: ssl, serial: nextSerial, role: role)
    }

    /// A connection closed: forget it.
    func connectionClosed(_ connection: MockPump) {
        connections[connection.fd] = nil
        ledger.connectionClosed()
    }

    private func acceptControl(fd: Int32) {
        controlConnections[fd] = MockControlConnection(core: self, fd: fd)
    }

    /// A control connection closed: forget it.
    func controlConnectionClosed(_ connection: MockControlConnection) {
        controlConnections[connection.fd] = nil
    }
}
