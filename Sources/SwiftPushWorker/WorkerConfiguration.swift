import Foundation
import PushCore
import SwiftPushKit
import SwiftPushRedis
import SwiftPushWorkerMachine
import SwiftPushWorkerRedis

/// The worker's configuration file (JSON; format and example in docs/worker.md). Decoded with
/// Foundation's JSONDecoder: the worker needs no package beyond the toolchain's. Durations are
/// milliseconds unless the name says seconds.
public struct WorkerConfiguration: Decodable, Sendable {
    /// One named credential set: one PushClient (APNs binds a connection to one team). Its
    /// keys are the options table's app keys (`Tables/options.tsv`; docs/worker.md,
    /// "Configuration"): every connection option the C API takes that a file can name
    /// (credentials, `environment` or `host`/`port`, `ca_file`, `proxy`, `connections`,
    /// `max_streams`, timeouts, retries...), plus `topics`. Any other key is refused.
    public struct App: Decodable, Sendable {
        /// The connection options the app sets, by option; the rest keep the table's defaults
        /// (the worker sets the deadline and the queue itself: `clientConfiguration(app:)`).
        package var options: APNsOptionValues
        /// Topics this app may send to; the first is the default. Empty: any (entries name it).
        public var topics: [String]?

        /// The worker's own key beside the table's.
        static let ownKeys = ["topics"]
        /// Every key an app may hold: the table's app keys and `topics`.
        static var knownKeys: [String] { APNsOptionValues.appKeys.map(\.key) + ownKeys }

        /// Decodes an app object; an unknown key throws `ConfigurationError` naming it
        /// (`unknown key apps.demo.max_stream (did you mean max_streams?)`).
        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: JSONKey.self)
            if let message = ConfigurationKeys.unknownKey(in: c.allKeys.map(\.stringValue), known: Self.knownKeys,
                                                          path: decoder.codingPath.map(\.stringValue)) {
                throw ConfigurationError(message)
            }
            options = try APNsOptionValues(appKeysFrom: decoder)
            topics = try c.decodeIfPresent([String].self, forKey: JSONKey(stringValue: "topics"))
        }
    }

    /// Redis: where it is and how to connect (`"redis"`: `RedisConfiguration`, docs/worker.md
    /// "Redis connection").
    public var redis = RedisConfiguration()
    /// The shards whose keys this worker serves (`push:{s}`...): `"shard": "0"` for one (the
    /// default), `"shards": ["0", "1", ...]` for several. Each has its own machine and Redis
    /// connections (to its slot's master on a cluster); the apps' clients are shared.
    public var shards = ["0"]
    /// The consumer group.
    public var group = "senders"
    /// This consumer's name; stable across restarts (default: host name and a fixed suffix).
    public var consumer: String?
    /// The figures each shard's machine works by, its result policy among them: `max_in_flight`,
    /// `batch`, `max_deliveries`, `drain_ms`, `reclaim_interval_ms`, `outcome_format`,
    /// `max_sends`, `unknown_results`, `delayed_retry_ms`, `max_delayed_retries`. Their
    /// defaults are written once, in `MachineSettings` and `ResultPolicy`; the keys that set
    /// them, with the values each may take, in `numberKeys`.
    public var machineSettings = MachineSettings()
    /// A notification's deadline inside the client (from send to outcome).
    public var deadlineMillis = 30_000
    /// The reclaim's min-idle: longer than the longest send (deadline x sends + back-off).
    public var minIdleMillis: Int?
    /// Guard lifetime: the duplicate-detection window.
    public var guardTTLSeconds = 86_400
    /// `/metrics` and `/healthz` on this port (0: any free one); nil (absent): not served.
    public var metricsPort: Int?
    /// The address they listen on (default 127.0.0.1: metrics are not for the world).
    public var metricsHost = "127.0.0.1"
    /// The credential sets, by name.
    public var apps: [String: App] = [:]

    /// The keys that are not numbers of `numberKeys`.
    enum CodingKeys: String, CodingKey, CaseIterable {
        case redis, shard, shards, group, consumer, minIdleMillis = "min_idle_ms", unknownResults = "unknown_results", apps
        case metricsPort = "metrics_port", metricsHost = "metrics_host"
    }

    /// The keys a worker configuration holds at the top level (docs/worker.md, "Configuration").
    public static var knownKeys: [String] { CodingKeys.allCases.map(\.rawValue) + numberKeys.map(\.key) }

    /// Decodes a configuration object; an unknown key, at the top level or in an app or the
    /// `"redis"` object, throws an error naming its path and the nearest known key.
    public init(from d: Decoder) throws {
        let any = try d.container(keyedBy: JSONKey.self)
        if let message = ConfigurationKeys.unknownKey(in: any.allKeys.map(\.stringValue), known: Self.knownKeys, path: []) {
            throw ConfigurationError(message)
        }
        for n in Self.numberKeys {
            if let value = try any.decodeIfPresent(Int.self, forKey: JSONKey(stringValue: n.key)) { self[keyPath: n.path] = value }
        }
        let c = try d.container(keyedBy: CodingKeys.self)
        redis = try c.decodeIfPresent(RedisConfiguration.self, forKey: .redis) ?? redis
        let one = try c.decodeIfPresent(String.self, forKey: .shard)
        let several = try c.decodeIfPresent([String].self, forKey: .shards)
        if one != nil && several != nil {
            throw DecodingError.dataCorruptedError(forKey: .shards, in: c, debugDescription: "give \"shard\" or \"shards\", not both")
        }
        shards = several ?? one.map { [$0] } ?? shards
        group = try c.decodeIfPresent(String.self, forKey: .group) ?? group
        consumer = try c.decodeIfPresent(String.self, forKey: .consumer)
        minIdleMillis = try c.decodeIfPresent(Int.self, forKey: .minIdleMillis)
        if let text = try c.decodeIfPresent(String.self, forKey: .unknownResults) {
            // Never the decoder's own message: it would quote the value.
            guard let mode = ResultPolicy.UnknownResults(rawValue: text) else {
                throw ConfigurationError("unknown_results must be \"resend\" or \"record\"")
            }
            machineSettings.policy.unknownResults = mode
        }
        metricsPort = try c.decodeIfPresent(Int.self, forKey: .metricsPort)
        metricsHost = try c.decodeIfPresent(String.self, forKey: .metricsHost) ?? metricsHost
        apps = try c.decode([String: App].self, forKey: .apps)
    }

    /// The longest one delivery can stay in flight here: every send up to its deadline, plus
    /// the back-off between sends. The reclaim's min-idle must exceed it.
    public var longestDeliveryMillis: Int {
        let policy = machineSettings.policy
        var backoff = 0
        let maxSends = max(policy.maxSends, 1)
        for s in 1..<maxSends { backoff += policy.resendDelayMillis << min(s - 1, 10) }
        return deadlineMillis * maxSends + backoff
    }

    /// min-idle in force: the configured one, or twice the longest delivery.
    public var effectiveMinIdleMillis: Int { minIdleMillis ?? 2 * longestDeliveryMillis }

    /// Reads and checks a configuration file; the error says what is wrong, never a secret.
    public static func load(path: String) throws(ConfigurationError) -> WorkerConfiguration {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigurationError("cannot read the configuration file \(path)")
        }
        let config: WorkerConfiguration
        do throws(ConfigurationError) {
            config = try parse(json: Array(data))
        } catch {
            throw ConfigurationError("\(path): \(error.description)")
        }
        try config.check()
        return config
    }

    /// Decodes configuration JSON (not yet checked: `check()`). The error names the key and
    /// its path (`unknown key apps.demo.max_stream (did you mean max_streams?)`, `wrong type
    /// at apps.demo.connections`) or, for text that is not JSON, the line and column.
    public static func parse(json: [UInt8]) throws(ConfigurationError) -> WorkerConfiguration {
        if let syntax = ConfigurationKeys.syntaxError(in: json) { throw ConfigurationError("not valid JSON: \(syntax)") }
        do {
            return try JSONDecoder().decode(WorkerConfiguration.self, from: Data(json))
        } catch let e as ConfigurationError {
            throw e
        } catch let e as RedisConfigurationError {
            throw ConfigurationError(e.description)
        } catch let DecodingError.keyNotFound(key, _) {
            throw ConfigurationError("missing \"\(key.stringValue)\"")
        } catch let DecodingError.typeMismatch(_, context), let DecodingError.valueNotFound(_, context) {
            throw ConfigurationError("wrong type at \(context.codingPath.map(\.stringValue).joined(separator: "."))")
        } catch let DecodingError.dataCorrupted(context) where !context.codingPath.isEmpty {
            let at = context.codingPath.map(\.stringValue).joined(separator: ".")
            throw ConfigurationError("\(at): \(context.debugDescription)")
        } catch {
            // Never the decoder's text: it could quote a value, and values may be secrets.
            throw ConfigurationError("not a worker configuration (a JSON object of the keys in docs/worker.md)")
        }
    }

    /// The rules a configuration must follow.
    public func check() throws(ConfigurationError) {
        do throws(RedisConfigurationError) {
            try redis.check()
        } catch {
            throw ConfigurationError("redis: \(error.description)")
        }
        if shards.isEmpty { throw ConfigurationError("\"shards\" lists no shard") }
        for s in shards where s.isEmpty || s.utf8.count > 64 || s.contains("{") || s.contains("}") || s.contains(",") {
            throw ConfigurationError("shard \"\(s)\": a shard is 1-64 bytes without braces or commas (it is the keys' hash tag: push:{shard})")
        }
        if Set(shards).count != shards.count { throw ConfigurationError("\"shards\" lists a shard twice") }
        if apps.isEmpty { throw ConfigurationError("\"apps\" lists no credential set") }
        for n in Self.numberKeys where !n.rule.allows(self[keyPath: n.path]) {
            throw ConfigurationError("\(n.key) must be \(n.rule)")
        }
        if effectiveMinIdleMillis <= longestDeliveryMillis {
            throw ConfigurationError("min_idle_ms (\(effectiveMinIdleMillis)) must exceed the longest delivery (\(longestDeliveryMillis) ms: deadline_ms x max_sends + back-off), or entries still in flight are reclaimed and sent twice")
        }
        for (name, app) in apps.sorted(by: { $0.key < $1.key }) {
            let t = app.options.text
            let token = t[.tokenKeyFile] != nil, cert = t[.certFile] != nil || t[.p12File] != nil
            if token == cert { throw ConfigurationError("app \"\(name)\": give either key_file (token auth) or cert_file/p12_file (certificate auth)") }
            if token && (t[.keyID] == nil || t[.teamID] == nil) { throw ConfigurationError("app \"\(name)\": token auth needs key_id and team_id") }
        }
    }
}

/// A configuration file that cannot be used, with the reason.
public struct ConfigurationError: Error, CustomStringConvertible, Sendable {
    /// What is wrong.
    public let description: String
    /// An error saying `description`.
    public init(_ description: String) { self.description = description }
}

/// A key of a JSON object, any string: for reading the keys an object holds before checking
/// them against the known ones.
struct JSONKey: CodingKey {
    let stringValue: String
    init(stringValue: String) { self.stringValue = stringValue }
    var intValue: Int? { nil }
    init?(intValue: Int) { nil }
}
