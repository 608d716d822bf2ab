import Foundation
import SwiftPushRedis
import SwiftPushWorker
import Testing

@Suite("WorkerConfiguration", .timeLimit(.minutes(1)))
struct WorkerConfigurationTests {
    func load(_ json: String) throws -> WorkerConfiguration {
        try JSONDecoder().decode(WorkerConfiguration.self, from: Data(json.utf8))
    }
    static let app = #""apps": {"demo": {"key_file": "k.p8", "key_id": "K", "team_id": "T"}}"#

    @Test("Defaults: min-idle is twice the longest delivery (deadline x sends + back-off)")
    func defaults() throws {
        let c = try load("{\(Self.app)}")
        #expect(c.redis.nodes == [RedisNode(host: "127.0.0.1", port: 6379)] && c.shards == ["0"] && c.group == "senders")
        #expect(c.longestDeliveryMillis == 30_000 * 3 + 500 + 1000)
        #expect(c.effectiveMinIdleMillis == 2 * c.longestDeliveryMillis)
        try c.check()
    }

    @Test("The redis object is the shared Redis model: credentials, TLS, a cluster's seed nodes and WAIT accepted, bad keys named")
    func redis() throws {
        let c = try load(#"{"redis": {"host": "r.example", "port": 6380, "username": "w", "password_env": "P", "tls": {"ca_file": "ca.pem"}}, "# + Self.app + "}")
        #expect(c.redis.nodes == [RedisNode(host: "r.example", port: 6380)] && c.redis.username == "w" && c.redis.tls?.caFile == "ca.pem")
        try c.check()
        let cluster = try load(#"{"redis": {"nodes": ["a:1", "b:2"], "wait_replicas": 1, "wait_timeout_ms": 500}, "# + Self.app + "}")
        #expect(cluster.redis.cluster && cluster.redis.nodes.count == 2 && cluster.redis.waitReplicas == 1)
        try cluster.check()
        #expect(throws: RedisConfigurationError.self) { try load(#"{"redis": {"pasword_file": "f"}, "# + Self.app + "}") }
    }

    @Test("One shard or several: \"shard\" or \"shards\", never both, each a usable hash tag, none twice")
    func shards() throws {
        #expect(try load(#"{"shard": "7", "# + Self.app + "}").shards == ["7"])
        let several = try load(#"{"shards": ["0", "1", "2"], "# + Self.app + "}")
        #expect(several.shards == ["0", "1", "2"])
        try several.check()
        #expect(several.shardCommands(shard: "2", consumer: "w").keys.stream == "push:{2}")
        #expect(throws: DecodingError.self) { try load(#"{"shard": "0", "shards": ["1"], "# + Self.app + "}") }
        for bad in [#"[]"#, #"["a}b"]"#, #"[""]"#, #"["1", "1"]"#, #"["a,b"]"#] {
            #expect(throws: ConfigurationError.self, "shards \(bad)") { try load(#"{"shards": "# + bad + ", " + Self.app + "}").check() }
        }
    }

    @Test("A min-idle not above the longest delivery is refused: in-flight entries would be sent twice")
    func minIdle() throws {
        let c = try load(#"{"deadline_ms": 10000, "max_sends": 1, "min_idle_ms": 10000, "# + Self.app + "}")
        #expect(throws: ConfigurationError.self) { try c.check() }
        let ok = try load(#"{"deadline_ms": 10000, "max_sends": 1, "min_idle_ms": 10001, "# + Self.app + "}")
        try ok.check()
    }

    @Test("Each app needs exactly one kind of credentials, and token auth its key and team ids")
    func credentials() throws {
        #expect(throws: ConfigurationError.self) { try load(#"{"apps": {}}"#).check() }
        #expect(throws: ConfigurationError.self) { try load(#"{"apps": {"a": {"key_file": "k", "p12_file": "p"}}}"#).check() }
        #expect(throws: ConfigurationError.self) { try load(#"{"apps": {"a": {"key_file": "k", "key_id": "K"}}}"#).check() }
        #expect(throws: ConfigurationError.self) { try load(#"{"apps": {"a": {"cert_file": "c", "environment": "staging"}}}"#).check() }
        try load(#"{"apps": {"a": {"cert_file": "c", "environment": "sandbox"}}}"#).check()
    }

    @Test("unknown_results must be resend or record")
    func unknownResults() throws {
        #expect(throws: ConfigurationError.self) { try load(#"{"unknown_results": "maybe", "# + Self.app + "}").check() }
        try load(#"{"unknown_results": "record", "# + Self.app + "}").check()
    }
}
