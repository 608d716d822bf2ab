import SwiftPushRedis

/// Connections to the tests' redis-servers through the Redis layer, as the CLI and the worker make them.
enum TestRedis {
    static func configuration(port: Int) -> RedisConfiguration {
        var c = RedisConfiguration(node: RedisNode(host: "127.0.0.1", port: port))
        c.connectTimeoutMillis = 1000
        c.failoverTimeoutMillis = 1000
        return c
    }

    /// One connection.
    static func connection(port: Int) throws -> RedisConnection { try RedisConnector(configuration(port: port)).connect() }

    /// A router (what `swiftpush status` reads through).
    static func router(port: Int) throws -> RedisRouter { try RedisRouter(configuration(port: port)) }
}
