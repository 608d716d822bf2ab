/// The figures a shard's machine works by. Their defaults here (and in `ResultPolicy`) are the
/// configuration file's: `WorkerConfiguration.machineSettings` starts from them and the file's
/// keys (docs/worker.md, "Configuration") change what they name.
public struct MachineSettings: Sendable {
    /// Notifications held at most (sent or waiting to be sent, with no outcome yet): the
    /// back-pressure bound (a read may pass it by one read's worth, docs/worker.md).
    public var maxInFlight = 5000
    /// Notifications of `maxInFlight` the bulk lane cannot take: kept for the fast lane
    /// (`push:{s}:fast`), at most half of `maxInFlight` (ShardMachine+Lanes.swift).
    public var fastReserve = 500
    /// Entries read per XREADGROUP at most.
    public var batch = 500
    /// Deliveries after which an entry is dead-lettered instead of sent again.
    public var maxDeliveries = 5
    /// How long SIGTERM waits for in-flight notifications.
    public var drainMillis = 10_000
    /// How often idle entries of dead consumers are reclaimed and delayed entries promoted.
    public var reclaimIntervalMillis = 5000
    /// An entry partly settled records what is done at most this often (a checkpoint).
    public var checkpointMillis = 250
    /// How outcomes of single entries are written (1, 2 or 3: docs/worker.md).
    public var outcomeFormat = 1
    /// The decisions for each result (resend, delay, record).
    public var policy = ResultPolicy()
    /// How long a read waits in Redis for the first entry when the stream has none
    /// (`ShardMachine.readNext`); 0: reads never wait there, and one that came back short is
    /// followed 10 ms later.
    public var blockMillis = 500
    /// How long a read waits for a quarter of `maxInFlight` to be free, and, when the worker is
    /// behind its stream, a settle for a quarter of it to be queued, before going with less
    /// (`ShardMachine.readNext`, `settleNext`): every request costs Redis a wake-up and, for a
    /// script, a call, whatever it carries.
    public var coalesceMillis = 10

    public init() {}

    /// The most entries one settle call carries, and the most notifications.
    static let settleEntries = 500
    static let settleNotifications = 4000
}
