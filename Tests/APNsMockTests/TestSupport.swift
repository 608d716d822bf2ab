import Foundation
import PushCore
@testable import APNsMock

/// The throwaway keys and certificates of `scripts/make-test-pki.sh`, made once per test run in
/// a temporary directory.
struct TestPKI: Sendable {
    let directory: String
    var serverCert: String { directory + "/server.pem" }
    var serverKey: String { directory + "/server.key" }
    var authKey: String { directory + "/AuthKey_TESTKEY001.p8" }
    var authPublicKey: String { directory + "/AuthKey_TESTKEY001.pub.pem" }
    var wrongAuthKey: String { directory + "/AuthKey_WRONGKEY01.p8" }

    static let keyID = "TESTKEY001"
    static let teamID = "TEAM123456"

    /// Made on first use; every test shares it.
    static let shared: TestPKI = {
        let dir = NSTemporaryDirectory() + "swiftpush-apnsmock-tests-\(getpid())"
        let script = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("scripts/make-test-pki.sh").path
        let result = Tool.run("/bin/bash", [script, dir])
        precondition(result.status == 0, "make-test-pki.sh failed: \(result.output)")
        return TestPKI(directory: dir)
    }()

    /// A mock configuration presenting the test server certificate and trusting TESTKEY001.
    func mockConfiguration() throws -> MockServer.Configuration {
        var c = MockServer.Configuration(certificateChainFile: serverCert, privateKeyFile: serverKey)
        c.tokenKeys = [try MockServer.TokenKey(keyID: Self.keyID, teamID: Self.teamID, file: authPublicKey)]
        return c
    }

    /// `bearer <jwt>` signed with `keyFile` under TESTKEY001, issued `age` seconds ago.
    func authorization(keyFile: String? = nil, age: Int64 = 0) throws -> String {
        let key = try SigningKey(path: keyFile ?? authKey)
        let clock = ManualClock(wallSeconds: SystemClock.shared.wallSeconds() - age)
        let token = try ProviderToken(key: key, keyID: Self.keyID, teamID: Self.teamID, clock: clock)
        return String(decoding: token.headerValue, as: UTF8.self)
    }

    /// Writes `bytes` to a file in the PKI directory and returns its path.
    func file(named name: String, bytes: [UInt8]) -> String {
        let path = directory + "/" + name
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
        return path
    }
}

/// Runs the independent HTTP/2 clients (Debian's nghttp2-client: `nghttp`, `h2load`).
enum Tool {
    /// Runs `executable` with `arguments`; returns the exit status and stdout+stderr.
    static func run(_ executable: String, _ arguments: [String]) -> (status: Int32, output: String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: executable)
        p.arguments = arguments
        let pipe = Pipe()
        p.standardOutput = pipe
        p.standardError = pipe
        do { try p.run() } catch { return (-1, "cannot run \(executable): \(error) (install nghttp2-client)") }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    /// What `nghttp -v` showed of one response.
    struct Response {
        var status: Int?
        var apnsId: String?
        var reason: String?
        var output: String
    }

    /// Sends one request with `nghttp` (it does not verify certificates: fine for a mock).
    static func nghttp(port: Int, path: String, headers: [String], payloadFile: String?) -> Response {
        var args = ["-v"]
        for h in headers { args += ["-H", h] }
        if let payloadFile { args += ["-d", payloadFile] }
        args.append("https://127.0.0.1:\(port)\(path)")
        let out = run("/usr/bin/nghttp", args).output
        var r = Response(output: out)
        for line in out.split(separator: "\n") where line.contains("recv (stream_id=") {
            if let m = line.firstMatch(of: /:status: (\d+)/) { r.status = Int(m.1) }
            if let m = line.firstMatch(of: /apns-id: (\S+)/) { r.apnsId = String(m.1) }
        }
        if let m = out.firstMatch(of: /\{"reason":"(\w+)"/) { r.reason = String(m.1) }
        return r
    }

    /// The `requests:` line of h2load: total, succeeded and failed counts.
    static func h2load(_ arguments: [String]) -> (succeeded: Int, failed: Int, output: String) {
        let out = run("/usr/bin/h2load", arguments).output
        guard let m = out.firstMatch(of: /(\d+) succeeded, (\d+) failed/) else { return (0, 0, out) }
        return (Int(m.1)!, Int(m.2)!, out)
    }
}
