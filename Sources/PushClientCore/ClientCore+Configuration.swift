import PushClientMachine
import PushCore
import PushCrypto

extension ClientCore.Settings {
    /// What the machine reads of `configuration`.
    init(_ configuration: ClientConfiguration) {
        let c = configuration
        self.init(endpoint: Endpoint(host: c.endpoint.host, port: c.endpoint.port, proxy: c.endpoint.proxy),
                  pool: Pool(connections: c.pool.connections, minConnections: c.pool.minConnections,
                             shrinkWindowMillis: c.pool.shrinkWindowMillis, maxStreamsPerConnection: c.pool.maxStreamsPerConnection),
                  timing: Timing(connectTimeoutMillis: c.timing.connectTimeoutMillis, idlePingMillis: c.timing.idlePingMillis,
                                 pingTimeoutMillis: c.timing.pingTimeoutMillis),
                  recovery: Recovery(retireAfterTimeouts: c.recovery.retireAfterTimeouts, retireAfterServerErrors: c.recovery.retireAfterServerErrors,
                                     unreachableAfterMillis: c.recovery.unreachableAfterMillis),
                  startedTagShift: c.startedTagShift)
    }
}

extension ClientCore {
    /// A core for a client of `configuration` (the machine keeps only the settings it reads),
    /// starting from `reconnect`'s back-off, with a random source seeded from the kernel's.
    init(configuration: ClientConfiguration, slots: SlotTable, retryPolicy: RetryPolicy, reconnect: ReconnectSchedule,
         token: ProviderToken?, log: ClientLog) {
        var system = SystemRandomNumberGenerator()
        self.init(configuration: Settings(configuration), slots: slots, retryPolicy: retryPolicy, backoff: reconnect.value,
                  random: CoreRandom(seededFrom: &system), tokenAuthentication: token != nil, log: log)
    }
}
