import Foundation
import Testing
import PushCore
import PushCrypto
import PushTransport
import TestProcessSupport
@testable import APNsMock

/// Every suite of the mock's tests is nested here, so that they run one at a time: each starts
/// servers and client processes, and timing-sensitive tests (delays, refused connections) should
/// not compete with the others for the machine's two cores.
@Suite(.serialized, .timeLimit(.minutes(5))) enum MockTests {}

/// The throwaway keys and certificates of `scripts/make-test-pki.sh` and
/// `Tests/support/make-apns-client-certs.sh`, made once per test run in a temporary directory.
struct TestPKI: Sendable {
    let directory: String
    var serverCert: String { directory + "/server.pem" }
    var serverKey: String { directory + "/server.key" }
    var caCert: String { directory + "/ca.pem" }
    var authKey: String { directory + "/AuthKey_TESTKEY001.p8" }
    var authPublicKey: String { directory + "/AuthKey_TESTKEY001.pub.pem" }
    var wrongAuthKey: String { directory + "/AuthKey_WRONGKEY01.p8" }

    static let keyID = "TESTKEY001"
    static let teamID = "TEAM123456"
    /// A second team, whose key is WRONGKEY01 (for team-binding tests).
    static let otherKeyID = "WRONGKEY01"
    static let otherTeamID = "TEAM654321"

    /// The package's root directory (symbolic links resolved: Tests/sanitizers/Package.swift
    /// builds this file through one).
    static let root = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath()
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Made on first use; every test shares it.
    static let shared: TestPKI = {
        let dir = NSTemporaryDirectory() + "swiftpush-apnsmock-tests-\(getpid())"
        for script in ["scripts/make-test-pki.sh", "Tests/support/make-apns-client-certs.sh"] {
            let result = Tool.run("/bin/bash", [root.appendingPathComponent(script).path, dir])
            precondition(result.status == 0, "\(script) failed: \(result.output)")
        }
        return TestPKI(directory: dir)
    }()

    /// A client certificate and key made by make-apns-client-certs.sh ("apns-multi",
    /// "apns-single" or "apns-plain").
    func clientCertificate(_ name: String) -> (cert: String, key: String) {
        (directory + "/\(name).pem", directory + "/\(name).key")
    }

    /// A mock configuration presenting the test server certificate and trusting TESTKEY001.
    func mockConfiguration() throws -> MockServer.Configuration {
        var c = MockServer.Configuration(certificateChainFile: serverCert, privateKeyFile: serverKey)
        c.tokenKeys = [try MockServer.TokenKey(keyID: Self.keyID, teamID: Self.teamID, file: authPublicKey)]
        return c
    }

    /// `bearer <jwt>` signed with `keyFile` under `keyID`/`teamID`, issued `age` seconds before
    /// `now`.
    func authorization(keyFile: String? = nil, keyID: String = TestPKI.keyID, teamID: String = TestPKI.teamID,
                       age: Int64 = 0, now: Int64 = SystemClock.shared.wallSeconds()) throws -> String {
        let key = try SigningKey(path: keyFile ?? authKey)
        let clock = ManualClock(wallSeconds: now - age)
        let token = try ProviderToken(key: key, keyID: keyID, teamID: teamID, clock: clock)
        return String(decoding: token.headerValue, as: UTF8.self)
    }

    /// Writes `bytes` to a file in the PKI directory and returns its path.
    func file(named name: String, bytes: [UInt8]) -> String {
        let path = directory + "/" + name
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
        return path
    }
}

/// Starting servers the way most tests want them.
extension TestPKI {
    static let token = String(repeating: "ab", count: 32)
    static let payload = #"{"aps":{"alert":"hello"}}"#

    /// A running server with token auth (TESTKEY001), adjusted by `adjust`; stopped by the
    /// caller.
    func startServer(_ adjust: (inout MockServer.Configuration) throws -> Void = { _ in }) throws -> MockServer {
        var config = try mockConfiguration()
        try adjust(&config)
        let server = MockServer(configuration: config)
        try server.start()
        return server
    }

    var payloadFile: String { file(named: "payload.json", bytes: Array(Self.payload.utf8)) }

    /// The headers of a valid alert request with a fresh token.
    func validHeaders(topic: String = "com.example.app") throws -> [String] {
        ["apns-topic: \(topic)", "apns-push-type: alert", "authorization: " + (try authorization())]
    }
}

/// Runs the independent HTTP/2 clients (Debian's nghttp2-client: `nghttp`, `h2load`).
enum Tool {
    /// Runs `executable` with `arguments` (and `stdin`); returns the exit status and
    /// stdout+stderr. At most `seconds`: then it is killed, and the status is -1.
    /// `whileRunning` runs on this thread once the process has started.
    static func run(_ executable: String, _ arguments: [String], stdin: Data? = nil,
                    environment: [String: String]? = nil, seconds: Double = 300,
                    whileRunning: () -> Void = {}) -> (status: Int32, output: String) {
        let merged = environment.map { ProcessInfo.processInfo.environment.merging($0) { $1 } }
        let (termination, output) = ChildProcess.run(executable, arguments, environment: merged, input: stdin.map { [UInt8]($0) },
                                                     mergeErrors: true, seconds: seconds, whileRunning: whileRunning)
        switch termination {
        case .exited(let code)?: return (code, output)
        case .signaled(let signal)?: return (-1, output + "\n(ended by signal \(signal))")
        case nil: return (-1, output.isEmpty ? "cannot run \(executable) (install nghttp2-client)" : output)
        }
    }

    /// What `nghttp -v` showed of one response.
    struct Response {
        var status: Int?
        var apnsId: String?
        var uniqueId: String?
        var reason: String?
        var output: String
    }

    /// Sends one request with `nghttp` (it does not verify certificates: fine for a mock).
    static func nghttp(port: Int, path: String, headers: [String], payloadFile: String?,
                       clientCertificate: (cert: String, key: String)? = nil) -> Response {
        var args = ["-v", "-t", "10"]
        for h in headers { args += ["-H", h] }
        if let payloadFile { args += ["-d", payloadFile] }
        if let c = clientCertificate { args += ["--cert=\(c.cert)", "--key=\(c.key)"] }
        args.append("https://127.0.0.1:\(port)\(path)")
        let out = run("/usr/bin/nghttp", args).output
        var r = Response(output: out)
        for line in out.split(separator: "\n") where line.contains("recv (stream_id=") {
            if let m = line.firstMatch(of: /:status: (\d+)/) { r.status = Int(m.1) }
            if let m = line.firstMatch(of: /\sapns-id: (\S+)/) { r.apnsId = String(m.1) }
            if let m = line.firstMatch(of: /apns-unique-id: (\S+)/) { r.uniqueId = String(m.1) }
        }
        if let m = out.firstMatch(of: /\{"reason":"(\w+)"/) { r.reason = String(m.1) }
        return r
    }

    /// The `requests:` and `status codes:` lines of h2load.
    struct LoadResult {
        var succeeded = 0
        var failed = 0
        var status2xx = 0
        var status4xx = 0
        var status5xx = 0
        var output = ""
    }

    static func h2load(_ arguments: [String]) -> LoadResult {
        let out = run("/usr/bin/h2load", arguments).output
        var r = LoadResult(output: out)
        if let m = out.firstMatch(of: /(\d+) succeeded, (\d+) failed/) {
            r.succeeded = Int(m.1)!
            r.failed = Int(m.2)!
        }
        if let m = out.firstMatch(of: /status codes: (\d+) 2xx, \d+ 3xx, (\d+) 4xx, (\d+) 5xx/) {
            r.status2xx = Int(m.1)!
            r.status4xx = Int(m.2)!
            r.status5xx = Int(m.3)!
        }
        return r
    }

    /// h2load arguments for `count` valid requests on `connections` connections with
    /// `streams` concurrent streams each.
    static func h2loadArguments(port: Int, count: Int, connections: Int = 1, streams: Int = 1,
                                authorization: String?, token: String = TestPKI.token,
                                payloadFile: String) -> [String] {
        var args = ["-n", "\(count)", "-c", "\(connections)", "-m", "\(streams)", "-t", "1",
                    "-H", "apns-topic: com.example.app", "-H", "apns-push-type: alert", "-d", payloadFile]
        if let authorization { args += ["-H", "authorization: " + authorization] }
        return args + ["https://127.0.0.1:\(port)/3/device/\(token)"]
    }
}

/// Waits for `condition` by polling until `timeout` seconds have passed; true if it held.
func eventually(timeout: Double = 5, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if condition() { return true }
        usleep(10_000)
    }
    return condition()
}
