#if canImport(Glibc)
import Glibc
#endif
import PushCore
import PushTransport

/// A mock APNs server: TLS + HTTP/2 on a loopback address, answering
/// `POST /3/device/<token>` the way APNs does (see docs/apns.md and docs/mock.md).
///
/// One I/O thread of its own (an epoll `EventLoop`, never Swift concurrency) accepts
/// connections and serves them all. Use:
/// ```swift
/// var config = MockServer.Configuration(certificateChainFile: "server.pem", privateKeyFile: "server.key")
/// config.tokenKeys = [try .init(keyID: "TESTKEY001", teamID: "TEAM123456", file: "AuthKey_TESTKEY001.p8")]
/// let server = MockServer(configuration: config)
/// try server.start()
/// // ... connect to 127.0.0.1:server.port ...
/// server.stop()
/// ```
///
/// Faults (`MockFaults`) are set at start and may be replaced at any time; every processed
/// request is recorded (`record()`), so tests can check exactly-once delivery. Out of process,
/// the control interface (`Configuration.controlPort`, see `MockControl`) offers the same.
///
/// Thread safety: `start`, `stop`, `port` and `controlPort` belong to the thread that owns the
/// server (they are not meant to race each other); `stats()`, `setFaults(_:)`, `faults()`,
/// `record()` and `resetRecord()` may be called from any thread at any time. Counters, records
/// and faults survive `stop()` and a later `start()`.
public final class MockServer: @unchecked Sendable {
    /// The configuration the server was made with.
    public let configuration: Configuration
    /// The port the server listens on (meaningful after `start()`; the chosen one when the
    /// configuration asked for port 0).
    public private(set) var port: Int = 0
    /// The control interface's port (meaningful after `start()`; 0 when
    /// `Configuration.controlPort` is nil).
    public private(set) var controlPort: Int = 0
    /// The channel management listener's port (meaningful after `start()`; 0 when
    /// `Configuration.channelManagementPort` is nil).
    public private(set) var channelManagementPort: Int = 0
    /// The broadcast channels the server knows (`Configuration.channels`).
    public var channels: ChannelRegistry { configuration.channels }

    private let ledger: MockLedger
    private let mailbox: FaultMailbox
    private var core: MockServerCore?
    private var thread: pthread_t?

    /// A server that will use `configuration`; nothing happens until `start()`.
    public init(configuration: Configuration) {
        self.configuration = configuration
        ledger = MockLedger(recording: configuration.recordRequests, recordLimit: configuration.recordLimit)
        mailbox = FaultMailbox(configuration.faults)
    }

    deinit { stop() }

    /// Loads the certificate and keys, binds the listening socket and starts the I/O thread.
    /// Throws when a file cannot be loaded or the address cannot be bound.
    public func start() throws(StartError) {
        guard core == nil else { throw StartError("the server is already running") }
        let core = try MockServerCore(configuration: configuration, ledger: ledger, mailbox: mailbox)
        port = core.port
        controlPort = core.controlPort
        channelManagementPort = core.channelManagementPort
        var tid = pthread_t()
        let context = Unmanaged.passRetained(core).toOpaque()
        let rc = pthread_create(&tid, nil, { context in
            let core = Unmanaged<MockServerCore>.fromOpaque(context!).takeRetainedValue()
            core.run()
            return nil
        }, context)
        if rc != 0 {
            Unmanaged<MockServerCore>.fromOpaque(context).release()
            core.discard()
            throw StartError("cannot start the server thread: \(String(cString: strerror(rc)))")
        }
        self.core = core
        thread = tid
    }

    /// Stops the server: closes the listening sockets and every connection at once (no
    /// GOAWAY: clients see their connections drop, as when APNs's server dies), and joins the
    /// I/O thread. Does nothing when the server is not running. The port may be bound again
    /// right away. Counters, records and faults stay.
    public func stop() {
        guard let core, let thread else { return }
        core.requestStop()
        pthread_join(thread, nil)
        self.core = nil
        self.thread = nil
    }

    /// The counters as they are now. Safe from any thread.
    public func stats() -> MockStats { ledger.snapshot() }

    /// Replaces the faults. Safe from any thread; applies to requests and connections that
    /// arrive afterwards, and restarts every fault counter (server-wide and per connection).
    public func setFaults(_ faults: MockFaults) { mailbox.set(faults) }

    /// The faults in force. Safe from any thread.
    public func faults() -> MockFaults { mailbox.current().0 }

    /// Every request processed so far, in processing order (empty when
    /// `Configuration.recordRequests` is off). Safe from any thread.
    public func record() -> [MockRecord] { ledger.records() }

    /// Forgets the records (the counters stay). Safe from any thread.
    public func resetRecord() { ledger.resetRecord() }
}
