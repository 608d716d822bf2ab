import Foundation
import TestProcessSupport
import Logging
import PushCore
@testable import APNsMock
@testable import SwiftPushKit

/// What the Swift API's tests share: the test PKI, a mock APNs server in this process (real TLS
/// and HTTP/2 on loopback), and a configuration for it.
enum KitTestSupport {
    static let token = "00fc13adff785122b4ad28809a3420982341241421348097878e577c991de8f0"
    static let payload = PushPayload(json: #"{"aps":{"alert":"hello"}}"#)

    /// The package's root directory (symbolic links resolved: Tests/sanitizers/Package.swift
    /// builds this file through one).
    static let root = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath()
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The test keys and certificates, made once per test process.
    static let pki: String = {
        let dir = NSTemporaryDirectory() + "swiftpushkit-tests-\(getpid())"
        let (termination, _) = ChildProcess.run("/bin/bash", [root.appendingPathComponent("scripts/make-test-pki.sh").path, dir],
                                                passErrors: true, seconds: 180)
        precondition(termination == .exited(0), "make-test-pki.sh failed: \(String(describing: termination))")
        return dir
    }()

    /// A mock server with the test certificate, trusting TESTKEY001 for team TEAM123456.
    static func startMock(_ configure: (inout MockServer.Configuration) -> Void = { _ in }) throws -> MockServer {
        var c = MockServer.Configuration(certificateChainFile: pki + "/server.pem", privateKeyFile: pki + "/server.key")
        c.tokenKeys = [try MockServer.TokenKey(keyID: "TESTKEY001", teamID: "TEAM123456", file: pki + "/AuthKey_TESTKEY001.pub.pem")]
        configure(&c)
        let server = MockServer(configuration: c)
        try server.start()
        return server
    }

    /// A configuration for a server on `port` of localhost: the test CA, the test token key,
    /// topic com.example.app, one connection.
    static func configuration(port: Int) -> APNsConfiguration {
        var c = APNsConfiguration(environment: .custom(host: "localhost", port: port),
                                  credentials: .tokenKey(file: pki + "/AuthKey_TESTKEY001.p8", keyID: "TESTKEY001", teamID: "TEAM123456"),
                                  defaultTopic: "com.example.app")
        c.caFile = pki + "/ca.pem"
        c.pool.connections = 1
        return c
    }

    /// A client for `server`, configured as `configuration(port:)` says and then by `configure`.
    static func client(for server: MockServer, logger: Logger = quiet,
                       _ configure: (inout APNsConfiguration) -> Void = { _ in }) throws -> APNsClient {
        var c = configuration(port: server.port)
        configure(&c)
        return try APNsClient(configuration: c, logger: logger)
    }

    /// A logger that drops everything (the tests that read logs have their own).
    static let quiet = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })

    /// `count` notifications to `token` with the test payload.
    static func notifications(_ count: Int, token: String = token) -> [PushNotification] {
        Array(repeating: PushNotification(deviceToken: token, payload: payload), count: count)
    }

    /// Every element of `results`, in arrival order.
    static func collect(_ results: PushBatchResults) async -> [BatchResult] {
        var all: [BatchResult] = []
        for await r in results { all.append(r) }
        return all
    }
}

extension BatchResult {
    /// The result, or nil when the notification was refused.
    var value: PushResult? { try? result.get() }
    /// The refusal, or nil.
    var error: PushError? {
        if case .failure(let e) = result { return e }
        return nil
    }
}

/// Waits until `condition` holds (checked every 2 ms) or `seconds` pass; returns whether it
/// held. For conditions nothing signals (a mock's counter). Suspends between looks: no
/// cooperative thread is held.
@discardableResult
func waitUntil(seconds: Double, _ condition: () -> Bool) async -> Bool {
    let until = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
    while !condition() {
        if ContinuousClock.now >= until { return false }
        try? await Task.sleep(for: .milliseconds(2)) // between two looks at a condition that signals no one
    }
    return true
}

/// The blocking form, for code outside async contexts (starting a helper process).
@discardableResult
func waitUntilBlocking(seconds: Double, _ condition: () -> Bool) -> Bool {
    let until = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
    while !condition() {
        if ContinuousClock.now >= until { return false }
        usleep(2_000) // between two looks at a condition that signals no one
    }
    return true
}
