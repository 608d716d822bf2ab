import SwiftPushRedis

/// One of a shard's Redis connections as the driver uses it: requests written without waiting,
/// their replies read as they arrive (in order: Redis answers a connection's commands in the
/// order they came), each request's replies gathered into its `QueueReply`.
final class RedisLane {
    let commands: RedisShardCommands
    private(set) var connection: RedisConnection?

    /// A request sent and not fully answered.
    private struct Waiting {
        let id: Int
        let request: QueueRequest
        let replies: Int
        var parsed: [RedisShardCommands.Parsed] = []
    }
    private var waiting: [Waiting] = []
    private var head = 0

    init(commands: RedisShardCommands) {
        self.commands = commands
    }

    /// Uses `connection` from now on (nothing is waiting on a new connection).
    func attach(_ connection: RedisConnection) {
        close()
        self.connection = connection
    }

    /// Whether replies are awaited (the driver polls the descriptor then).
    var isBusy: Bool { head < waiting.count }
    var descriptor: Int32? { connection?.descriptor }

    /// Writes `request`'s commands (flushed at once).
    func send(id: Int, _ request: QueueRequest) throws(RedisError) {
        guard let c = connection else { throw RedisError(description: "not connected to Redis", connectionLost: true) }
        let list = commands.commands(for: request)
        for args in list { try c.append(args) }
        try c.flush()
        waiting.append(Waiting(id: id, request: request, replies: list.count))
    }

    /// Every request answered whole since the last call, without waiting: its reply, or the
    /// error reply it got (`QueueError`; one with `connectionLost` means the server lost the
    /// group or the scripts: the connection must be set up again).
    func receive() throws(RedisError) -> [(id: Int, reply: Result<QueueReply, QueueError>)] {
        guard let c = connection else { return [] }
        var done: [(id: Int, reply: Result<QueueReply, QueueError>)] = []
        while head < waiting.count {
            let request = waiting[head].request
            guard let p = try c.receiveIfReady(parsing: { RedisShardCommands.parse($0, for: request) }) else { break }
            waiting[head].parsed.append(p)
            guard waiting[head].parsed.count == waiting[head].replies else { continue }
            let w = waiting[head]
            head += 1
            do throws(QueueError) {
                done.append((w.id, .success(try commands.reply(for: w.request, w.parsed))))
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

    /// Drops the connection and everything waiting on it.
    func close() {
        connection?.close()
        connection = nil
        waiting.removeAll()
        head = 0
    }
}
