import Foundation
import Testing
@testable import PushClientCore
@testable import SwiftPushKit

/// The one builder of every host (`APNsConfiguration(options:naming:)`): option values as the
/// CLI's flags or a worker app's keys give them become credentials, an endpoint and the groups,
/// each value checked by the C ABI's setters, each message naming the value as the host spells it.
@Suite("Option values", .timeLimit(.minutes(1)))
struct OptionValuesTests {
    let pki = KitTestSupport.pki

    /// Values for the mock's token key.
    func tokenValues() -> APNsOptionValues {
        var v = APNsOptionValues()
        v.text = [.tokenKeyFile: pki + "/AuthKey_TESTKEY001.p8", .keyID: "TESTKEY001", .teamID: "TEAM123456"]
        return v
    }

    func build(_ v: APNsOptionValues) throws(PushError) -> APNsConfiguration {
        try APNsConfiguration(options: v, naming: APNsOptionValues.appKey(for:))
    }

    @Test("A token key, Apple's sandbox and pool values become the configuration the values say")
    func tokenKeyAndSandbox() throws {
        var v = tokenValues()
        v.numbers = [.environment: 1, .connections: 4, .deadlineMs: 2500, .retireAfterTimeouts: 7]
        v.text[.defaultTopic] = "com.example.app"
        let c = try build(v)
        #expect(c.environment == .sandbox)
        #expect(c.credentials.description.hasPrefix("token key \(pki)/AuthKey_TESTKEY001.p8 (key id TESTKEY001"))
        #expect(c.pool.connections == 4 && c.timing.deadline == .milliseconds(2500) && c.recovery.retireAfterTimeouts == 7)
        #expect(c.defaultTopic == "com.example.app")
        #expect(try c.clientConfiguration().endpoint.host == "api.sandbox.push.apple.com")
    }

    @Test("Another host with a port, a CA file and a proxy with credentials")
    func hostPortProxy() throws {
        var v = tokenValues()
        v.text[.host] = "localhost"
        v.text[.caFile] = pki + "/ca.pem"
        v.text[.proxy] = "[::1]:3128"
        v.text[.proxyCredentials] = "user:secret"
        v.numbers[.port] = 2197
        let c = try build(v)
        #expect(c.environment == .custom(host: "localhost", port: 2197) && c.caFile == pki + "/ca.pem")
        #expect(c.proxy?.host == "::1" && c.proxy?.port == 3128)
        #expect(try c.clientConfiguration().endpoint.proxyCredentials != nil)
    }

    @Test("A port alone stays on Apple's production host")
    func portAlone() throws {
        var v = tokenValues()
        v.numbers[.port] = 2197
        #expect(try build(v).environment == .custom(host: "api.push.apple.com", port: 2197))
    }

    @Test("Certificates: a PEM file with its key, or a .p12 with its password")
    func certificates() throws {
        var v = APNsOptionValues()
        v.text = [.certFile: pki + "/client.pem", .certKeyFile: pki + "/client.key"]
        #expect(try build(v).credentials.description == "certificate \(pki)/client.pem")
        v.text = [.p12File: pki + "/client.p12", .p12Password: "secret"]
        #expect(try build(v).credentials.description == "certificate \(pki)/client.p12")
    }

    @Test("Mistakes are refused with the host's names", arguments: [
        ([PushOption.tokenKeyFile: "K", .certFile: "C"], [:], "key_file (token auth) and cert_file/p12_file (certificate auth) exclude each other"),
        ([.certFile: "C", .p12File: "P"], [:], "cert_file and p12_file exclude each other"),
        ([.p12Password: "x"], [:], "p12_password goes with p12_file"),
        ([.certKeyFile: "K"], [:], "cert_key_file goes with cert_file"),
        ([:], [:], "missing key_file (token auth) or cert_file/p12_file (certificate auth)"),
        ([.host: "localhost"], [.environment: 1], "host and environment exclude each other"),
        ([.certFile: "/dev/null"], [PushOption.connections: 0], "connections must be in 1...64, got 0"),
        ([.certFile: "/dev/null", .host: "a b"], [:], "host: host must be a non-empty name or address without spaces"),
    ] as [([PushOption: String], [PushOption: Int], String)])
    func mistakes(text: [PushOption: String], numbers: [PushOption: Int], message: String) {
        var v = APNsOptionValues()
        v.text = text
        v.numbers = numbers
        #expect(throws: PushError(.badOption, message)) { try build(v) }
    }

    @Test("A token key needs its key id and team id; an unreadable key file is a .key error naming it")
    func tokenKeyParts() throws {
        var v = tokenValues()
        v.text[.teamID] = nil
        #expect(throws: PushError(.badOption, "missing team_id")) { try build(v) }
        v = tokenValues()
        v.text[.tokenKeyFile] = pki + "/no-such.p8"
        let error = #expect(throws: PushError.self) { try build(v) }
        #expect(error?.code == .key && error?.message.hasPrefix("key_file: cannot read key file \(pki)/no-such.p8") == true)
    }

    @Test("An app's keys are read from its JSON object, typed by option, other keys left alone")
    func appKeys() throws {
        let json = """
        {"key_file": "\(pki)/AuthKey_TESTKEY001.p8", "key_id": "TESTKEY001", "team_id": "TEAM123456",
         "environment": "sandbox", "connections": 3, "ping_timeout_ms": 1500, "topics": ["com.example.app"]}
        """
        let app = try JSONDecoder().decode(AppOptions.self, from: Data(json.utf8))
        #expect(app.values.numbers == [.environment: 1, .connections: 3, .pingTimeoutMs: 1500])
        let c = try app.values.appConfiguration()
        #expect(c.environment == .sandbox && c.pool.connections == 3 && c.timing.pingTimeout == .milliseconds(1500))
    }

    @Test("An app's key of the wrong type, or an environment that is neither name, is a decoding error at that key")
    func appKeyMistakes() {
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(AppOptions.self, from: Data(#"{"connections": "two"}"#.utf8)) }
        do {
            _ = try JSONDecoder().decode(AppOptions.self, from: Data(#"{"environment": "staging"}"#.utf8))
            Issue.record("decoded an unknown environment")
        } catch DecodingError.dataCorrupted(let context) {
            #expect(context.debugDescription == #"environment must be "production" or "sandbox""#)
            #expect(context.codingPath.map(\.stringValue) == ["environment"])
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test("Every app key and every CLI-less option name is distinct (one key per option)")
    func appKeysAreDistinct() {
        let keys = APNsOptionValues.appKeys.map(\.key)
        #expect(Set(keys).count == keys.count)
        for (key, option) in APNsOptionValues.appKeys { #expect(APNsOptionValues.appKey(for: option) == key) }
    }
}

/// An app object as a host decodes it: the table's keys.
private struct AppOptions: Decodable {
    let values: APNsOptionValues
    init(from decoder: any Decoder) throws { values = try APNsOptionValues(appKeysFrom: decoder) }
}
