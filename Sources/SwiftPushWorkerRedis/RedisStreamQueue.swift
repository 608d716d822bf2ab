import SwiftPushRedis
import SwiftPushWorkerMachine

/// `WorkQueue` on a Redis stream with a consumer group (the protocol: `RedisShardCommands`,
/// docs/worker.md), one request at a time on one connection: for tests of the protocol against
/// a real server and for tools. The worker itself sends the same commands without waiting
/// (`WorkerDriver`, through `RedisLane`). Not thread-safe.
public final class RedisStreamQueue: WorkQueue {
    /// The connector (configuration, password, TLS context).
    public let connector: RedisConnector
    /// The protocol's commands for this shard and consumer.
    public let commands: RedisShardCommands
    private var connection: RedisConnection?

    /// A queue that connects on `open()`.
    public init(connector: RedisConnector, commands: RedisShardCommands) {
        self.connector = connector
        self.commands = commands
    }

    public func open() throws(QueueError) {
        connection?.close()
        connection = nil
        let c: RedisConnection
        let replies: [RedisReply]
        do throws(RedisError) {
            c = try connector.connect()
            replies = try c.pipeline(commands.setupCommands())
        } catch {
            throw QueueError(error.description, connectionLost: error.connectionLost, permanent: error.isPermanent)
        }
        try commands.checkSetup(replies)
        connection = c
    }

    public func perform(_ request: QueueRequest) throws(QueueError) -> QueueReply {
        guard let c = connection else { throw QueueError("not connected to Redis", connectionLost: true) }
        var parsed: [RedisShardCommands.Parsed] = []
        do throws(RedisError) {
            let list = commands.commands(for: request)
            for args in list { try c.append(args) }
            try c.flush()
            for _ in list { parsed.append(try c.receive { RedisShardCommands.parse($0, for: request) }) }
        } catch {
            connection = nil
            throw QueueError(error.description, connectionLost: true, permanent: error.isPermanent)
        }
        do throws(QueueError) {
            return try commands.reply(for: request, parsed)
        } catch {
            if error.connectionLost { close() }
            throw error
        }
    }

    /// Closes the connection.
    public func close() {
        connection?.close()
        connection = nil
    }
}
