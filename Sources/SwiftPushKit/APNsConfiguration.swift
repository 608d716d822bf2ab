/// Everything a client needs, as values: where to connect, how to authenticate, the pool, the
/// timing, retries, a proxy. The groups `pool`, `timing` and `recovery` and their defaults and
/// ranges are generated from `Tables/options.tsv`, where the C ABI's options come from, and
/// every value is checked by the C ABI's own setters when a client opens, with the same
/// messages (`PushError` `.badOption`, `.key`, `.tls`).
///
/// ```swift
/// var configuration = APNsConfiguration(environment: .sandbox,
///     credentials: .tokenKey(file: "AuthKey_ABC123DEFG.p8", keyID: "ABC123DEFG", teamID: "DEF123GHIJ"),
///     defaultTopic: "com.example.app")
/// configuration.pool.connections = 4
/// configuration.timing.deadline = .seconds(30)
/// ```
public struct APNsConfiguration: Sendable {
    /// Where to connect.
    public var environment: APNsEnvironment
    /// How to authenticate.
    public var credentials: APNsCredentials
    /// The topic (usually the app's bundle id) of notifications that name none; a broadcast's
    /// bundle id.
    public var defaultTopic: String?
    /// A PEM file of CA certificates to trust instead of the system's trust store (a test
    /// server's, the mock's).
    public var caFile: String?
    /// An HTTP CONNECT proxy to tunnel through.
    public var proxy: APNsProxy?
    /// Connections, I/O threads, streams and slots.
    public var pool = Pool()
    /// Deadlines, timeouts and health PINGs.
    public var timing = Timing()
    /// Retries, reconnects, retiring bad connections.
    public var recovery = Recovery()
    /// The channel management host (broadcast channels: `APNsClient.createChannel`...); nil
    /// takes Apple's for `environment` (`api-manage-broadcast[.sandbox].push.apple.com`),
    /// which only Apple's two environments have.
    public var channelManagement: APNsEnvironment?
    /// How long a graceful shutdown (`APNsClient.run()` under ServiceLifecycle) lets
    /// notifications in flight finish before the rest are cancelled (they still get results).
    public var shutdownDrain: Duration = .seconds(10)
    /// Dimensions added to every metric the client records (for example `[("app", "news")]`
    /// when a host runs several clients).
    public var metricsDimensions: [(String, String)] = []

    /// A configuration with the defaults of `Tables/options.tsv`.
    public init(environment: APNsEnvironment, credentials: APNsCredentials, defaultTopic: String? = nil) {
        self.environment = environment
        self.credentials = credentials
        self.defaultTopic = defaultTopic
    }
}
