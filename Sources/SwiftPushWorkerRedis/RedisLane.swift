import SwiftPushRedis
import SwiftPushWorkerMachine

/// One of a shard's Redis connections as the driver uses it: requests written without waiting,
/// their replies read as they arrive (in order: Redis answers a connection's commands in the
/// order they came), each request's replies gathered into its `QueueReply`.
///
/// With `wait` (`wait_replicas`), each write request (`RedisShardCommands.isConfirmedWrite`) is
/// followed by `WAIT` on the same connection, and it is answered only once enough replicas
/// have everything the connection wrote: a shortfall is answered as a lost connection
/// (`QueueError.connectionLost`), since a failover could still take those writes back. The
/// machine then does what it does after any loss: reconnects, sends the settle again, re-reads
/// what it read (every request is idempotent).
package final class RedisLane {
    let commands: RedisShardCommands
    let wait: RedisWait?
    package private(set) var connection: RedisConnection?

    /// A request sent and not fully answered.
    private struct Waiting {
        let id: Int
        let request: QueueRequest
        let replies: Int
        /// Whether the last reply is a WAIT's.
        let confirmed: Bool
        var parsed: [RedisShardCommands.Parsed] = []
    }
    private var waiting: [Waiting] = []
    private var head = 0

    package init(commands: RedisShardCommands, wait: RedisWait? = nil) {
        self.commands = commands
        self.wait = wait
    }

    /// Uses `connection` from now on (nothing is waiting on a new connection).
    package func attach(_ connection: RedisConnection) {
        close()
        self.connection = connection
    }

    /// Whether replies are awaited (the driver polls the descriptor then).
    package var isBusy: Bool { head < waiting.count }
    package var descriptor: Int32? { connection?.descriptor }

    /// Writes `request`'s commands (flushed at once).
    package func send(id: Int, _ request: QueueRequest) throws(RedisError) {
        guard let c = connection else { throw RedisError(description: "not connected to Redis", connectionLost: true) }
        let list = commands.commands(for: request)
        for args in list { try c.append(args) }
        var confirmed = false
        if let wait, RedisShardCommands.isConfirmedWrite(request) {
            try c.append(wait.arguments)
            confirmed = true
        }
        try c.flush()
        waiting.append(Waiting(id: id, request: request, replies: list.count + (confirmed ? 1 : 0), confirmed: confirmed))
    }

    /// Every request answered whole since the last call, without waiting: its reply, or the
    /// error reply it got (`QueueError`; one with `connectionLost` means the server lost the
    /// group or the scripts: the connection must be set up again).
    package func receive() throws(RedisError) -> [(id: Int, reply: Result<QueueReply, QueueError>)] {
        guard let c = connection else { return [] }
        var done: [(id: Int, reply: Result<QueueReply, QueueError>)] = []
        while head < waiting.count {
            let request = waiting[head].request
            guard let p = try c.receiveIfReady(parsing: { RedisShardCommands.parse($0, for: request) }) else { break }
            waiting[head].parsed.append(p)
            guard waiting[head].parsed.count == waiting[head].replies else { continue }
            var w = waiting[head]
            head += 1
            let acknowledged = w.confirmed ? w.parsed.removeLast() : nil
            do throws(QueueError) {
                let reply = try commands.reply(for: w.request, w.parsed)
                if let acknowledged, let wait { try Self.check(acknowledged, wait, endpoint: c.endpoint) }
                done.append((w.id, .success(reply)))
            } catch {
                done.append((w.id, .failure(error)))
            }
        }
        if head == waiting.count {
            waiting.removeAll(keepingCapacity: true)
            head = 0
        }
        return done
    }

    /// Whether the WAIT reply `parsed` confirms the writes on enough replicas; if not, the
    /// request counts as lost with the connection.
    private static func check(_ parsed: RedisShardCommands.Parsed, _ wait: RedisWait, endpoint: String) throws(QueueError) {
        guard case .reply(let r) = parsed else { return }
        do throws(RedisError) {
            try wait.check(r, endpoint: endpoint)
        } catch {
            throw QueueError("\(error.description): not confirmed, so treated as lost (reconnecting; every request is idempotent)",
                             connectionLost: true)
        }
    }

    /// Drops the connection and everything waiting on it.
    package func close() {
        connection?.close()
        connection = nil
        waiting.removeAll()
        head = 0
    }
}
