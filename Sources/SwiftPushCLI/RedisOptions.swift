import ArgumentParser
import Foundation
import PushCore
import PushTransport
import SwiftPushRedis
import SwiftPushWorker
import SwiftPushKeys

/// The Redis option group shared by enqueue and outcomes (`@OptionGroup`): the same model as the
/// worker's `"redis"` object (`RedisConfiguration`) — a server or a cluster's seeds, an ACL user
/// and a password from a file or an environment variable (never on the command line, where `ps`
/// shows it), TLS — plus the shard. `--redis-config` reads a worker.json's `"redis"` object; the
/// other options override what it says.
struct RedisOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Redis server (default 127.0.0.1:6379)", valueName: "HOST:PORT"))
    var redis: String?
    @Option(help: ArgumentHelp("a Redis Cluster: seed nodes, comma-separated", valueName: "HOST:PORT,..."))
    var cluster: String?
    @Option(help: ArgumentHelp("read Redis settings from the \"redis\" object of this JSON file (a worker.json)", valueName: "FILE"), completion: .file())
    var redisConfig: String?
    @Option(help: ArgumentHelp("ACL user (AUTH user password)", valueName: "NAME"))
    var redisUser: String?
    @Option(help: ArgumentHelp("file holding the Redis password", valueName: "FILE"), completion: .file())
    var redisPasswordFile: String?
    @Option(help: ArgumentHelp("environment variable holding the Redis password", valueName: "VAR"))
    var redisPasswordEnv: String?
    @Flag(help: "TLS to Redis (verified against the system trust store unless --redis-ca-file)")
    var redisTls = false
    @Option(help: ArgumentHelp("CA certificates for Redis's TLS certificate (implies --redis-tls)", valueName: "FILE"), completion: .file())
    var redisCaFile: String?
    @Option(help: ArgumentHelp("name Redis's certificate must carry, if not the host's (implies --redis-tls)", valueName: "NAME"))
    var redisServerName: String?
    @Option(help: ArgumentHelp("client certificate for Redis (PEM; implies --redis-tls)", valueName: "FILE"), completion: .file())
    var redisCertFile: String?
    @Option(help: ArgumentHelp("its key (PEM; default: in the certificate file)", valueName: "FILE"), completion: .file())
    var redisKeyFile: String?
    /// Optional so that `status` can tell "every shard" from "shard 0"; the others read `shardName`.
    @Option(help: ArgumentHelp("the shard: keys push:{S}, outcomes:{S}... (default 0)", valueName: "S"))
    var shard: String?

    /// The shard named, or "0".
    var shardName: String { shard ?? "0" }

    func validate() throws(ValidationError) { _ = try configuration() }

    /// The configuration the options describe (checked).
    func configuration() throws(ValidationError) -> RedisConfiguration {
        var c = try base()
        if redis != nil && cluster != nil { throw ValidationError("give --redis (one server) or --cluster (seed nodes), not both") }
        if let redis {
            guard let node = RedisNode(parsing: redis) else { throw ValidationError("--redis needs HOST:PORT, got '\(redis)'") }
            c.nodes = [node]
            c.cluster = false
        }
        if let cluster {
            var seeds: [RedisNode] = []
            for item in cluster.split(separator: ",", omittingEmptySubsequences: true) {
                guard let node = RedisNode(parsing: String(item)) else { throw ValidationError("--cluster needs HOST:PORT,..., got '\(item)'") }
                seeds.append(node)
            }
            c.nodes = seeds
            c.cluster = true
        }
        if let redisUser { c.username = redisUser }
        if redisPasswordFile != nil && redisPasswordEnv != nil {
            throw ValidationError("give --redis-password-file or --redis-password-env, not both")
        }
        if let redisPasswordFile { c.password = .file(redisPasswordFile) }
        if let redisPasswordEnv { c.password = .environment(redisPasswordEnv) }
        if redisTls || redisCaFile != nil || redisServerName != nil || redisCertFile != nil || redisKeyFile != nil {
            var tls = c.tls ?? RedisTLSConfiguration()
            if let redisCaFile { tls.caFile = redisCaFile }
            if let redisServerName { tls.serverName = redisServerName }
            if let redisCertFile { tls.certFile = redisCertFile }
            if let redisKeyFile { tls.keyFile = redisKeyFile }
            c.tls = tls
        }
        do throws(RedisConfigurationError) {
            try c.check()
        } catch {
            throw ValidationError("Redis: \(error.description)")
        }
        return c
    }

    /// The `"redis"` object of `--redis-config`, or the defaults.
    private func base() throws(ValidationError) -> RedisConfiguration {
        guard let redisConfig else { return RedisConfiguration() }
        guard let data = FileManager.default.contents(atPath: redisConfig) else { throw ValidationError("cannot read \(redisConfig)") }
        /// A worker.json: its `"redis"` object is read; the rest (the worker's settings) is only
        /// checked for unknown keys, by the rule every configuration file follows.
        struct File: Decodable {
            var redis: RedisConfiguration?
            init(from decoder: any Decoder) throws {
                let c = try decoder.container(keyedBy: AnyKey.self)
                let keys = c.allKeys.map(\.stringValue)
                if let message = ConfigurationKeys.unknownKey(in: keys, known: WorkerConfiguration.knownKeys, path: []) {
                    throw RedisConfigurationError(message)
                }
                redis = try c.decodeIfPresent(RedisConfiguration.self, forKey: AnyKey(stringValue: "redis"))
            }
        }
        if let syntax = ConfigurationKeys.syntaxError(in: Array(data)) { throw ValidationError("\(redisConfig): not valid JSON: \(syntax)") }
        do {
            guard let c = try JSONDecoder().decode(File.self, from: data).redis else {
                throw ValidationError("\(redisConfig) has no \"redis\" object")
            }
            return c
        } catch let e as ValidationError {
            throw e
        } catch {
            throw ValidationError("\(redisConfig): \(RedisConfiguration.describe(error))")
        }
    }

    /// A router for the configured server or cluster, connected now (the server, or the
    /// cluster's slot map), so that a wrong password, an untrusted certificate or an unreachable
    /// server ends the command at once with one line (exit status 2). Also the shard's keys.
    func connect() throws(ValidationError) -> (RedisRouter, StreamKeys) {
        // A Redis that goes away mid-write: an error message, not a silent death by SIGPIPE.
        IOThread.blockSIGPIPE()
        let c = try configuration()
        do throws(RedisError) {
            let router = try RedisRouter(c)
            if router.isCluster { try router.refresh() } else { _ = try router.connection(forSlot: 0) }
            return (router, StreamKeys(shard: shardName))
        } catch {
            throw ValidationError(error.description)
        }
    }
}

/// Any key of a JSON object (the keys of `--redis-config`'s file, checked before use).
private struct AnyKey: CodingKey {
    let stringValue: String
    init(stringValue: String) { self.stringValue = stringValue }
    var intValue: Int? { nil }
    init?(intValue: Int) { nil }
}
