import ArgumentParser
import PushTransport
import SwiftPushWorker

/// `--redis HOST:PORT` and `--shard S`, shared by enqueue, outcomes and status (`@OptionGroup`).
struct RedisOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Redis server", valueName: "HOST:PORT"))
    var redis = "127.0.0.1:6379"
    /// Optional so that `status` can tell "every shard" from "shard 0"; the others read `shardName`.
    @Option(help: ArgumentHelp("the shard: keys push:{S}, outcomes:{S}... (default 0)", valueName: "S"))
    var shard: String?

    /// The shard named, or "0".
    var shardName: String { shard ?? "0" }

    func validate() throws(ValidationError) { _ = try address() }

    private func address() throws(ValidationError) -> (host: String, port: Int) {
        guard let colon = redis.lastIndex(of: ":"), let port = Int(redis[redis.index(after: colon)...]), (1...65535).contains(port) else {
            throw ValidationError("--redis needs HOST:PORT, got '\(redis)'")
        }
        return (String(redis[..<colon]), port)
    }

    /// Connects to the server named by `--redis`.
    func connect() throws(ValidationError) -> (RedisConnection, StreamKeys) {
        let (host, port) = try address()
        // A Redis that goes away mid-write: an error message, not a silent death by SIGPIPE.
        IOThread.blockSIGPIPE()
        do throws(RedisError) {
            return (try RedisConnection(host: host, port: port), StreamKeys(shard: shardName))
        } catch {
            throw ValidationError(error.description)
        }
    }
}
