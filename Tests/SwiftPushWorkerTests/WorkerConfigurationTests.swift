import Foundation
import SwiftPushWorker
import Testing

@Suite("WorkerConfiguration")
struct WorkerConfigurationTests {
    func load(_ json: String) throws -> WorkerConfiguration {
        try JSONDecoder().decode(WorkerConfiguration.self, from: Data(json.utf8))
    }
    static let app = #""apps": {"demo": {"key_file": "k.p8", "key_id": "K", "team_id": "T"}}"#

    @Test("Defaults: min-idle is twice the longest delivery (deadline x sends + back-off)")
    func defaults() throws {
        let c = try load("{\(Self.app)}")
        #expect(c.redis.host == "127.0.0.1" && c.redis.port == 6379 && c.shard == "0" && c.group == "senders")
        #expect(c.longestDeliveryMillis == 30_000 * 3 + 500 + 1000)
        #expect(c.effectiveMinIdleMillis == 2 * c.longestDeliveryMillis)
        try c.check()
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
