import Foundation
import PushCore
import PushCrypto
import SwiftPushRedis
import Testing

/// The `"redis"` object: what it accepts, its defaults, and a clear error for each bad input
/// (never a secret in it).
@Suite("Redis configuration", .timeLimit(.minutes(1)))
struct RedisConfigurationTests {
    func parse(_ json: String) throws(RedisConfigurationError) -> RedisConfiguration {
        try RedisConfiguration.parse(json: Array(json.utf8))
    }

    /// The error `json` gets (fails the test when it parses).
    func error(_ json: String) -> String {
        do throws(RedisConfigurationError) {
            _ = try parse(json)
            Issue.record("\(json) was accepted")
            return ""
        } catch {
            return error.description
        }
    }

    @Test("An empty object is one server at 127.0.0.1:6379, plain, no password, no WAIT")
    func defaults() throws {
        let c = try parse("{}")
        #expect(c == RedisConfiguration())
        #expect(c.nodes == [RedisNode(host: "127.0.0.1", port: 6379)] && !c.cluster)
        #expect(c.password == .none && c.tls == nil && c.waitReplicas == 0)
        #expect(c.connectTimeoutMillis == 5000 && c.commandTimeoutMillis == 15_000 && c.failoverTimeoutMillis == 10_000)
        #expect(RedisWait(c) == nil)
    }

    @Test("A single server with an ACL user, a password file, TLS settings, timeouts and WAIT")
    func everything() throws {
        let c = try parse("""
            {"host": "redis.example.com", "port": 6380, "username": "sender", "password_file": "/run/secrets/redis",
             "tls": {"ca_file": "ca.pem", "server_name": "redis.internal", "cert_file": "c.pem", "key_file": "c.key"},
             "connect_timeout_ms": 2000, "command_timeout_ms": 20000, "wait_replicas": 1, "wait_timeout_ms": 500,
             "failover_timeout_ms": 15000}
            """)
        #expect(c.nodes == [RedisNode(host: "redis.example.com", port: 6380)] && !c.cluster)
        #expect(c.username == "sender" && c.password == .file("/run/secrets/redis"))
        #expect(c.tls == RedisTLSConfiguration(caFile: "ca.pem", serverName: "redis.internal", certFile: "c.pem", keyFile: "c.key"))
        #expect(c.connectTimeoutMillis == 2000 && c.commandTimeoutMillis == 20_000 && c.failoverTimeoutMillis == 15_000)
        #expect(RedisWait(c) == RedisWait(replicas: 1, timeoutMillis: 500))
        #expect(c.summary == "redis.example.com:6380 (TLS)")
    }

    @Test("A cluster is a list of seed nodes, IPv6 in brackets; tls true means the system trust store")
    func cluster() throws {
        let c = try parse(#"{"nodes": ["10.0.0.1:7000", "[::1]:7001", "redis-2.internal:7002"], "password_env": "REDIS_PASSWORD", "tls": true}"#)
        #expect(c.cluster)
        #expect(c.nodes == [RedisNode(host: "10.0.0.1", port: 7000), RedisNode(host: "::1", port: 7001), RedisNode(host: "redis-2.internal", port: 7002)])
        #expect(c.password == .environment("REDIS_PASSWORD") && c.tls == RedisTLSConfiguration())
        #expect(c.summary == "cluster 10.0.0.1:7000,[::1]:7001,redis-2.internal:7002 (TLS)")
        #expect(try parse(#"{"tls": false}"#).tls == nil)
    }

    @Test("An inline password is held as a secret: printing the configuration shows its size only")
    func inlinePassword() throws {
        let c = try parse(#"{"password": "hunter2-hunter2"}"#)
        #expect(c.password == .value(SecretBytes(copying: "hunter2-hunter2")))
        #expect(!"\(c)".contains("hunter2") && !String(reflecting: c).contains("hunter2"))
    }

    @Test("Bad input gets an error that names the key")
    func badInput() {
        #expect(error(#"{"tsl": true}"#) == "unknown key redis.tsl (did you mean tls?)")
        #expect(error(#"{"tls": {"ca": "x.pem"}}"#) == "unknown key redis.tls.ca")
        #expect(error(#"{"tls": {"ca_fle": "x.pem"}}"#) == "unknown key redis.tls.ca_fle (did you mean ca_file?)")
        #expect(error(#"{"pasword_file": "f", "zzz": 1}"#) == "unknown key redis.pasword_file (did you mean password_file?)")
        #expect(error(#"{"host": "a", "nodes": ["b:1"]}"#).contains("either host and port"))
        #expect(error(#"{"nodes": ["b"]}"#) == #"nodes: "b" is not HOST:PORT"#)
        #expect(error(#"{"nodes": ["::1:7000"]}"#).contains("not HOST:PORT"))
        #expect(error(#"{"nodes": []}"#) == "nodes lists no seed node")
        #expect(error(#"{"port": 0}"#).contains("not in 1...65535"))
        #expect(error(#"{"port": "6379"}"#).contains("wrong type at port"))
        #expect(error(#"{"username": "u"}"#).contains("needs a password"))
        #expect(error(#"{"password": "p", "password_env": "E"}"#).contains("at most one of password"))
        #expect(error(#"{"tls": {"key_file": "k.pem"}}"#) == "tls: key_file needs cert_file")
        #expect(error(#"{"tls": {"ca_file": ""}}"#) == "tls: ca_file is empty")
        #expect(error(#"{"wait_replicas": 1, "wait_timeout_ms": 0}"#).contains("blocks for ever"))
        #expect(error(#"{"wait_replicas": -1}"#).contains("wait_replicas must be"))
        #expect(error(#"{"connect_timeout_ms": 0}"#).contains("connect_timeout_ms"))
        #expect(error("{").contains("not valid JSON"))
        #expect(error("{\n  \"host\": \"a\",\n  \"port\": 6379,\n}") .hasPrefix("not valid JSON: line 4, column 1: "))
        #expect(!error(#"{"password": "s3cret", "password_file": "f"}"#).contains("s3cret"))
    }

    @Test("HOST:PORT parsing: names, IPv4, bracketed IPv6; no port, a bad port or a bare IPv6 are refused")
    func nodeParsing() {
        #expect(RedisNode(parsing: "localhost:6379") == RedisNode(host: "localhost", port: 6379))
        #expect(RedisNode(parsing: "[fe80::1]:7000") == RedisNode(host: "fe80::1", port: 7000))
        #expect(RedisNode(host: "fe80::1", port: 7000).description == "[fe80::1]:7000")
        for bad in ["localhost", "localhost:0", "localhost:65536", ":6379", "fe80::1:7000", "[]:1", "host:port"] {
            #expect(RedisNode(parsing: bad) == nil, "\(bad)")
        }
    }

    @Test("A connector reports an unusable configuration as a permanent configuration error")
    func connectorChecks() {
        var c = RedisConfiguration()
        c.tls = RedisTLSConfiguration(caFile: "/nonexistent/ca.pem")
        #expect {
            _ = try RedisConnector(c)
        } throws: { error in
            let e = error as! RedisError
            return e.kind == .configuration && e.isPermanent && e.description.contains("/nonexistent/ca.pem")
        }
        c.tls = nil
        c.username = "u"
        #expect {
            _ = try RedisConnector(c)
        } throws: { error in
            (error as! RedisError).description.contains("needs a password")
        }
    }
}
