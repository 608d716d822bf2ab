import PushTransport
import SwiftPushWorker

/// `--redis HOST:PORT` and `--shard S`, shared by enqueue and outcomes.
enum RedisOptions {
    static let specs = [
        OptionSpec("redis", value: "HOST:PORT", help: "Redis server (default 127.0.0.1:6379)"),
        OptionSpec("shard", value: "S", help: "the shard: keys push:{S}, outcomes:{S}... (default 0)"),
    ]

    /// Connects to the server named by `--redis`.
    static func connect(_ args: ParsedArguments) throws(UsageError) -> (RedisConnection, StreamKeys) {
        let text = args.value("redis") ?? "127.0.0.1:6379"
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (1...65535).contains(port) else {
            throw UsageError("--redis needs HOST:PORT, got '\(text)'")
        }
        // A Redis that goes away mid-write: an error message, not a silent death by SIGPIPE.
        IOThread.blockSIGPIPE()
        do throws(RedisError) {
            let c = try RedisConnection(host: String(text[..<colon]), port: port)
            return (c, StreamKeys(shard: args.value("shard") ?? "0"))
        } catch {
            throw UsageError(error.description)
        }
    }
}
