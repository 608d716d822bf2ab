/// A Redis configuration that cannot be used, with the reason (never a secret).
public struct RedisConfigurationError: Error, CustomStringConvertible, Sendable {
    /// What is wrong, naming the key (`redis.tls.ca_file`-style paths are the caller's to add).
    public let description: String
    /// An error saying `description`.
    public init(_ description: String) { self.description = description }
}
