import PushCore

/// The server's configuration as its I/O thread uses it, made once per `MockServer.start()` and
/// shared by reference: the core, every connection and every request handler read the same
/// object, so no part of the mock keeps a copy of a setting of its own.
///
/// Immutable after init (the `ChannelRegistry` it names takes its own lock). What is derived
/// from the configuration is derived here, once: device-token keys lowercased (tokens are
/// compared without regard to case) and the token verifier with its keys loaded. The clock is
/// not here: its I/O-thread reading (`MockClock`) changes as time passes.
final class MockSettings: @unchecked Sendable {
    /// Checks provider tokens; empty when token authentication is off.
    let verifier: JWTVerifier
    /// `Configuration.maxConcurrentStreams`: what MAX_CONCURRENT_STREAMS is raised to.
    let maxConcurrentStreams: UInt32
    /// `Configuration.strictInitialStreamLimit`.
    let strictInitialStreamLimit: Bool
    /// `Configuration.minTokenUpdateIntervalSeconds`.
    let minTokenUpdateIntervalSeconds: Int64
    /// `Configuration.lenientDeviceTokens`: device tokens of any length pass.
    let lenientDeviceTokens: Bool
    /// `Configuration.developmentMode`: answers carry `apns-unique-id`.
    let developmentMode: Bool
    /// `Configuration.allowedTopics`: what connections without a certificate may push to
    /// (empty: anything).
    let allowedTopics: Set<String>
    /// `Configuration.deviceTokenTopics`, keys lowercased.
    let deviceTokenTopics: [String: String]
    /// `Configuration.unregisteredDeviceTokens`, keys lowercased.
    let unregisteredDeviceTokens: [String: Int64]
    /// `Configuration.channels`: the broadcast channels.
    let channels: ChannelRegistry

    /// The settings of `c` (whose `maxConcurrentStreams` is in 1...Int32.max), with its token
    /// keys loaded into `verifier`.
    init(_ c: MockServer.Configuration, verifier: JWTVerifier) {
        self.verifier = verifier
        maxConcurrentStreams = UInt32(clamping: c.maxConcurrentStreams)
        strictInitialStreamLimit = c.strictInitialStreamLimit
        minTokenUpdateIntervalSeconds = c.minTokenUpdateIntervalSeconds
        lenientDeviceTokens = c.lenientDeviceTokens
        developmentMode = c.developmentMode
        allowedTopics = c.allowedTopics
        deviceTokenTopics = Self.lowercasedKeys(c.deviceTokenTopics)
        unregisteredDeviceTokens = Self.lowercasedKeys(c.unregisteredDeviceTokens)
        channels = c.channels
    }

    /// `table` with its keys lowercased; of two keys that differ only in case, one wins.
    private static func lowercasedKeys<Value>(_ table: [String: Value]) -> [String: Value] {
        Dictionary(table.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { a, _ in a })
    }
}
