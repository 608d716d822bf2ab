import Foundation
import PushCore
import PushCrypto

/// The `"redis"` object of a JSON configuration (worker.json, the CLI's `--redis-config`):
///
///     {"host": "redis.example.com", "port": 6380,
///      "username": "sender", "password_file": "/run/secrets/redis",
///      "tls": {"ca_file": "ca.pem", "server_name": "redis.example.com"},
///      "wait_replicas": 1, "wait_timeout_ms": 1000}
///
///     {"nodes": ["10.0.0.1:6379", "10.0.0.2:6379"], "password_env": "REDIS_PASSWORD", "tls": true}
///
/// Unknown keys are refused (`ConfigurationKeys`: the path and the nearest known name,
/// `unknown key redis.tsl (did you mean tls?)`): a misspelt `"tls"` or `"password_file"` must
/// not silently connect in the clear or without credentials.
extension RedisConfiguration: Decodable {
    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    private static let knownKeys = [
        "host", "port", "nodes", "username", "password", "password_file", "password_env", "tls",
        "connect_timeout_ms", "command_timeout_ms", "wait_replicas", "wait_timeout_ms", "failover_timeout_ms",
    ]
    private static let knownTLSKeys = ["ca_file", "server_name", "cert_file", "key_file"]

    /// Where the object is, for messages: its path in the file (`redis` in a worker.json and
    /// in `--redis-config`'s file), `redis` when it is the whole document.
    private static func path(_ decoder: Decoder) -> [String] {
        decoder.codingPath.isEmpty ? ["redis"] : decoder.codingPath.map(\.stringValue)
    }

    /// Decodes a `"redis"` object; unknown keys and two password sources are
    /// `RedisConfigurationError`s (`check()` applies the other rules).
    public init(from decoder: Decoder) throws {
        self.init()
        let c = try decoder.container(keyedBy: Key.self)
        func key(_ name: String) -> Key { Key(stringValue: name) }
        if let message = ConfigurationKeys.unknownKey(in: c.allKeys.map(\.stringValue), known: Self.knownKeys, path: Self.path(decoder)) {
            throw RedisConfigurationError(message)
        }
        let host = try c.decodeIfPresent(String.self, forKey: key("host"))
        let port = try c.decodeIfPresent(Int.self, forKey: key("port"))
        if let seeds = try c.decodeIfPresent([String].self, forKey: key("nodes")) {
            if host != nil || port != nil { throw RedisConfigurationError("give either host and port (one server) or nodes (a cluster), not both") }
            var parsed: [RedisNode] = []
            for s in seeds {
                guard let node = RedisNode(parsing: s) else { throw RedisConfigurationError("nodes: \"\(s)\" is not HOST:PORT") }
                parsed.append(node)
            }
            nodes = parsed
            cluster = true
        } else {
            nodes = [RedisNode(host: host ?? "127.0.0.1", port: port ?? 6379)]
        }
        username = try c.decodeIfPresent(String.self, forKey: key("username"))
        var sources: [RedisPasswordSource] = []
        if let p = try c.decodeIfPresent(String.self, forKey: key("password")) { sources.append(.value(SecretBytes(copying: p))) }
        if let f = try c.decodeIfPresent(String.self, forKey: key("password_file")) { sources.append(.file(f)) }
        if let e = try c.decodeIfPresent(String.self, forKey: key("password_env")) { sources.append(.environment(e)) }
        if sources.count > 1 { throw RedisConfigurationError("give at most one of password, password_file and password_env") }
        password = sources.first ?? .none
        if c.contains(key("tls")) { tls = try Self.decodeTLS(c, key("tls"), path: Self.path(decoder)) }
        connectTimeoutMillis = try c.decodeIfPresent(Int.self, forKey: key("connect_timeout_ms")) ?? connectTimeoutMillis
        commandTimeoutMillis = try c.decodeIfPresent(Int.self, forKey: key("command_timeout_ms")) ?? commandTimeoutMillis
        waitReplicas = try c.decodeIfPresent(Int.self, forKey: key("wait_replicas")) ?? waitReplicas
        waitTimeoutMillis = try c.decodeIfPresent(Int.self, forKey: key("wait_timeout_ms")) ?? waitTimeoutMillis
        failoverTimeoutMillis = try c.decodeIfPresent(Int.self, forKey: key("failover_timeout_ms")) ?? failoverTimeoutMillis
    }

    /// `"tls": true` (the system trust store), `false` (plain), or an object of settings.
    private static func decodeTLS(_ c: KeyedDecodingContainer<Key>, _ key: Key, path: [String]) throws -> RedisTLSConfiguration? {
        if let flag = try? c.decode(Bool.self, forKey: key) { return flag ? RedisTLSConfiguration() : nil }
        let t = try c.nestedContainer(keyedBy: Key.self, forKey: key)
        if let message = ConfigurationKeys.unknownKey(in: t.allKeys.map(\.stringValue), known: knownTLSKeys, path: path + ["tls"]) {
            throw RedisConfigurationError(message)
        }
        func text(_ name: String) throws -> String? { try t.decodeIfPresent(String.self, forKey: Key(stringValue: name)) }
        return RedisTLSConfiguration(caFile: try text("ca_file"), serverName: try text("server_name"),
                                     certFile: try text("cert_file"), keyFile: try text("key_file"))
    }

    /// Decodes and checks a `"redis"` object given as JSON text (tests, the CLI). Errors say
    /// what is wrong in words, never a secret.
    public static func parse(json: [UInt8]) throws(RedisConfigurationError) -> RedisConfiguration {
        if let syntax = ConfigurationKeys.syntaxError(in: json) { throw RedisConfigurationError("not valid JSON: \(syntax)") }
        let config: RedisConfiguration
        do {
            config = try JSONDecoder().decode(RedisConfiguration.self, from: Data(json))
        } catch let e as RedisConfigurationError {
            throw e
        } catch {
            throw RedisConfigurationError(describe(error))
        }
        try config.check()
        return config
    }

    /// A decoding error in words (a key missing, a wrong type at a path), never the values.
    public static func describe(_ error: Error) -> String {
        switch error {
        case let e as RedisConfigurationError:
            return e.description
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
            return "wrong type at \(context.codingPath.map(\.stringValue).joined(separator: "."))"
        case DecodingError.keyNotFound(let key, _):
            return "missing \"\(key.stringValue)\""
        default:
            return "not valid JSON"
        }
    }
}
