import CSwiftPushABI
import Foundation
import PushClientCore
import PushCore
import SwiftPushKit
import SwiftPushRedis
import SwiftPushWorker
import Testing
import TestProcessSupport

@Suite("WorkerConfiguration", .timeLimit(.minutes(1)))
struct WorkerConfigurationTests {
    func load(_ json: String) throws -> WorkerConfiguration {
        try WorkerConfiguration.parse(json: Array(json.utf8))
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
        #expect(throws: ConfigurationError.self) { try load(#"{"redis": {"pasword_file": "f"}, "# + Self.app + "}") }
    }

    @Test("One shard or several: \"shard\" or \"shards\", never both, each a usable hash tag, none twice")
    func shards() throws {
        #expect(try load(#"{"shard": "7", "# + Self.app + "}").shards == ["7"])
        let several = try load(#"{"shards": ["0", "1", "2"], "# + Self.app + "}")
        #expect(several.shards == ["0", "1", "2"])
        try several.check()
        #expect(several.shardCommands(shard: "2", consumer: "w").keys.stream == "push:{2}")
        #expect(throws: ConfigurationError.self) { try load(#"{"shard": "0", "shards": ["1"], "# + Self.app + "}") }
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

    /// The figures a configuration sets, in the order of `numberKeys`, then `unknown_results`.
    func figures(_ c: WorkerConfiguration) -> [String] {
        let m = c.machineSettings, p = m.policy
        return [m.maxInFlight, m.batch, c.deadlineMillis, m.maxDeliveries, p.maxSends, m.outcomeFormat, m.reclaimIntervalMillis,
                m.drainMillis, p.delayedRetryMillis, p.maxDelayedRetries, c.guardTTLSeconds].map(String.init) + [p.unknownResults.rawValue]
    }

    @Test("Each top-level number sets the figure it names in the machine's settings; absent, the machine's own default holds")
    func numbersReachTheMachine() throws {
        let c = try load(#"{"max_in_flight": 11, "batch": 12, "deadline_ms": 1300, "max_deliveries": 14, "max_sends": 2, "outcome_format": 2, "#
                         + #""reclaim_interval_ms": 17, "drain_ms": 18, "delayed_retry_ms": 19, "max_delayed_retries": 20, "guard_ttl_s": 21, "#
                         + #""unknown_results": "record", "min_idle_ms": 999999, "# + Self.app + "}")
        try c.check()
        #expect(figures(c) == ["11", "12", "1300", "14", "2", "2", "17", "18", "19", "20", "21", "record"])
        #expect(c.shardCommands(shard: "0", consumer: "w").guardTTLSeconds == 21)
        // Nothing set: the defaults are MachineSettings' and ResultPolicy's, written nowhere else.
        let m = MachineSettings(), d = try load("{\(Self.app)}")
        #expect(figures(d) == [m.maxInFlight, m.batch, 30_000, m.maxDeliveries, m.policy.maxSends, m.outcomeFormat, m.reclaimIntervalMillis,
                               m.drainMillis, m.policy.delayedRetryMillis, m.policy.maxDelayedRetries, 86_400].map(String.init) + ["resend"])
    }

    @Test("Each rule names its key and the values it takes")
    func numberRules() throws {
        func refusal(_ member: String) -> String {
            do {
                try load("{\(member), \(Self.app)}").check()
                return "accepted"
            } catch {
                return "\(error)"
            }
        }
        #expect(refusal(#""max_in_flight": 0"#) == "max_in_flight must be 1...1000000")
        #expect(refusal(#""batch": 10001"#) == "batch must be 1...10000")
        #expect(refusal(#""deadline_ms": 99"#) == "deadline_ms must be at least 100")
        #expect(refusal(#""max_deliveries": 0"#) == "max_deliveries must be at least 1")
        #expect(refusal(#""max_sends": 0"#) == "max_sends must be at least 1")
        #expect(refusal(#""outcome_format": 4"#) == "outcome_format must be 1, 2 or 3")
        #expect(refusal(#""unknown_results": "maybe""#) == #"unknown_results must be "resend" or "record""#)
        #expect(refusal(#""drain_ms": "ten""#) == "wrong type at drain_ms")
        #expect(refusal(#""max_in_flight": 1000000, "batch": 10000, "deadline_ms": 100, "outcome_format": 3"#) == "accepted")
    }

    @Test("docs/worker.md's example shows every default, and names every top-level key")
    func documentedDefaults() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let doc = try String(contentsOf: root.appendingPathComponent("docs/worker.md"), encoding: .utf8)
        let section = try #require(doc.range(of: "## Configuration (")).upperBound
        let start = try #require(doc.range(of: "```json\n", range: section..<doc.endIndex)).upperBound
        let end = try #require(doc.range(of: "```", range: start..<doc.endIndex)).lowerBound
        let example = try load(String(doc[start..<end]))
        let d = try load("{\(Self.app)}")
        #expect(figures(example) == figures(d))
        #expect(example.minIdleMillis == d.effectiveMinIdleMillis && example.group == d.group && example.shards == d.shards)
        let text = doc[section..<doc.endIndex]
        for key in WorkerConfiguration.knownKeys { #expect(text.contains("\"\(key)\"") || text.contains("`\(key)`"), "\(key)") }
    }

    /// The message `json` is refused with.
    func error(_ json: String) -> String {
        do {
            _ = try load(json)
            return "accepted"
        } catch {
            return "\(error)"
        }
    }

    @Test("Unknown keys are refused at every level, with their path and the nearest known name")
    func unknownKeys() {
        #expect(error(#"{"max_inflight": 10, "# + Self.app + "}") == "unknown key max_inflight (did you mean max_in_flight?)")
        #expect(error(#"{"apps": {"demo": {"key_file": "k.p8", "key_id": "K", "team_id": "T", "max_stream": 5}}}"#)
                == "unknown key apps.demo.max_stream (did you mean max_streams?)")
        #expect(error(#"{"apps": {"demo": {"key_file": "k.p8", "key_id": "K", "team_id": "T", "topic": ["a"]}}}"#)
                == "unknown key apps.demo.topic (did you mean topics?)")
        #expect(error(#"{"redis": {"pasword_file": "f"}, "# + Self.app + "}") == "unknown key redis.pasword_file (did you mean password_file?)")
        #expect(error(#"{"redis": {"tls": {"server_nme": "r"}}, "# + Self.app + "}") == "unknown key redis.tls.server_nme (did you mean server_name?)")
        #expect(error(#"{"colour": "blue", "# + Self.app + "}") == "unknown key colour")
    }

    @Test("Text that is not JSON is refused with the line and column where it stops being JSON")
    func notJSON() {
        let text = "{\n  \"shard\": \"0\",\n  \"apps\": {\"demo\": {\"key_file\": \"k.p8\",}}\n}"
        #expect(error(text).hasPrefix("not valid JSON: line 3, column 40: "), "\(error(text))")
        #expect(error(#"{"apps": {"demo": {"connections": "two"}}}"#) == "wrong type at apps.demo.connections")
    }

    @Test("Every app key of the options table is accepted on an app (an int option's value a number, the rest strings)")
    func everyTableKey() throws {
        for (key, option) in APNsOptionValues.appKeys {
            let value = option == .environment ? #""sandbox""# : option.kind == .int ? "\(option.intRange.lowerBound)" : #""x""#
            let c = try load(#"{"apps": {"demo": {"\#(key)": \#(value)}}}"#)
            let app = try #require(c.apps["demo"])
            #expect(option.kind == .int ? app.options.numbers[option] != nil : app.options.text[option] == "x", "\(key)")
        }
    }

    /// A token key file, made by scripts/make-test-pki.sh once per test process.
    static let pki: String = {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let dir = NSTemporaryDirectory() + "swiftpush-worker-config-tests-\(getpid())"
        // ChildProcess: a bounded wait that cannot miss the child's exit (issue 36).
        let (termination, output) = ChildProcess.run("/bin/bash", [root.appendingPathComponent("scripts/make-test-pki.sh").path, dir],
                                                     mergeErrors: true, seconds: 120)
        precondition(termination == .exited(0), "make-test-pki.sh failed: \(output)")
        return dir
    }()

    @Test("An app's connection options from the table reach the client it opens; the rest keep the table's defaults")
    func appOptionsUsed() throws {
        let key = Self.pki + "/AuthKey_TESTKEY001.p8"
        let c = try load(#"""
            {"deadline_ms": 20000, "max_in_flight": 100, "shards": ["0", "1"],
             "apps": {"tuned": {"key_file": "\#(key)", "key_id": "TESTKEY001", "team_id": "TEAM123456",
                                "host": "localhost", "port": 2197, "connections": 3, "max_streams": 7,
                                "connect_timeout_ms": 1500, "max_attempts": 4, "retry_delay_ms": 250,
                                "idle_ping_ms": 0, "io_threads": 2, "min_connections": 1, "pool_shrink_ms": 5000},
                      "plain": {"key_file": "\#(key)", "key_id": "TESTKEY001", "team_id": "TEAM123456", "environment": "sandbox"}}}
            """#)
        try c.validateWithoutConnecting()
        let tuned = try c.clientConfiguration(app: "tuned")
        #expect(tuned.endpoint.host == "localhost" && tuned.endpoint.port == 2197)
        #expect(tuned.pool.connections == 3 && tuned.pool.maxStreamsPerConnection == 7 && tuned.pool.ioThreads == 2)
        #expect(tuned.pool.minConnections == 1 && tuned.pool.shrinkWindowMillis == 5000)
        #expect(tuned.timing.connectTimeoutMillis == 1500 && tuned.timing.idlePingMillis == 0)
        #expect(tuned.recovery.maxAttempts == 4 && tuned.recovery.retryDelayMillis == 250)
        // What the worker decides itself.
        #expect(tuned.timing.deadlineMillis == 20000 && tuned.pool.queueCapacity == 100 * 2 + 1024)
        let plain = try c.clientConfiguration(app: "plain")
        #expect(plain.endpoint.host == "api.sandbox.push.apple.com" && plain.endpoint.port == 443)
        #expect(plain.pool.connections == PushOption.connections.defaultInt
                && plain.pool.maxStreamsPerConnection == PushOption.maxStreams.defaultInt)
        // Fail-fast is off for the worker unless an app sets it: an APNs outage must not turn
        // the queue's notifications into FAILED Unreachable records within seconds.
        #expect(plain.recovery.unreachableAfterMillis == 0 && tuned.recovery.unreachableAfterMillis == 0)
        let failFast = try load(#"""
            {"apps": {"demo": {"key_file": "\#(key)", "key_id": "TESTKEY001", "team_id": "TEAM123456", "unreachable_after_ms": 3000}}}
            """#)
        #expect(try failFast.clientConfiguration(app: "demo").recovery.unreachableAfterMillis == 3000)
    }

    @Test("An app's values are checked as the C API checks them, the message naming the app and the key")
    func appValuesChecked() throws {
        let key = Self.pki + "/AuthKey_TESTKEY001.p8"
        func refusal(_ extra: String, keyFile: String = key) -> String {
            do {
                let c = try load(#"{"apps": {"demo": {"key_file": "\#(keyFile)", "key_id": "TESTKEY001", "team_id": "TEAM123456"\#(extra)}}}"#)
                try c.validateWithoutConnecting()
                return "accepted"
            } catch {
                return "\(error)"
            }
        }
        #expect(refusal(#", "max_streams": 0"#) == "app \"demo\": max_streams must be in 1...100000, got 0")
        #expect(refusal(#", "host": "h", "environment": "sandbox""#) == "app \"demo\": host and environment exclude each other")
        #expect(refusal("", keyFile: "/nonexistent/k.p8").hasPrefix("app \"demo\": key_file: cannot read key file /nonexistent/k.p8"))
        #expect(refusal("") == "accepted")
    }
}
