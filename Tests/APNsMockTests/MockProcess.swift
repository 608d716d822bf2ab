#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import PushCore
@testable import APNsMock
import TestProcessSupport

/// `swiftpush mock` run as its own process, as C, Python and Go tests run it (a `ChildProcess`:
/// it dies with the test process).
final class MockProcess {
    let process: ChildProcess
    let port: Int
    let controlPort: Int
    private let log: String

    /// The CLI next to this test bundle in the build directory, or the one SWIFTPUSH_TEST_CLI
    /// names: the sanitizer runs build these suites in a package without the command
    /// (Tests/sanitizers/Package.swift) and use the debug build's.
    static var cliPath: String {
        if let cli = ProcessInfo.processInfo.environment["SWIFTPUSH_TEST_CLI"], !cli.isEmpty { return cli }
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var dir = URL(fileURLWithPath: exe).deletingLastPathComponent()
        // The test runner lives in <build>/<name>.xctest (a file on Linux) or inside it.
        if dir.lastPathComponent.hasSuffix(".xctest") { dir = dir.deletingLastPathComponent() }
        return dir.appendingPathComponent("swiftpush-cli").path
    }

    /// Starts the mock with the test certificate and TESTKEY001 plus `arguments`, and waits
    /// for its port files.
    init(_ arguments: [String], pki: TestPKI = .shared) throws {
        let base = NSTemporaryDirectory() + "swiftpush-mockcli-\(getpid())-\(UUID().uuidString)"
        log = base + ".log"
        let arguments = ["mock", "--cert", pki.serverCert, "--key", pki.serverKey, "--port", "0",
                             "--key-id", TestPKI.keyID, "--team-id", TestPKI.teamID, "--auth-key", pki.authPublicKey,
                             "--port-file", base + ".port", "--control-port-file", base + ".control"] + arguments
        process = try ChildProcess(Self.cliPath, arguments, stdout: .file(log), stderr: .standardOutput)
        let p = process
        let ready = eventually(timeout: 10) { FileManager.default.fileExists(atPath: base + ".port") || !p.isRunning }
        let read = { (p: String) in Int(TestFiles.readText(p)?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? 0 }
        port = read(base + ".port")
        controlPort = read(base + ".control")
        guard ready, port > 0, controlPort > 0 else {
            process.kill()
            throw MockProcessError(message: "the mock did not start: \(output)")
        }
    }

    struct MockProcessError: Error, CustomStringConvertible {
        let message: String
        var description: String { message }
    }

    /// What the process printed so far.
    var output: String { TestFiles.readText(log) ?? "" }

    /// Stops it with SIGINT (as a person would) and returns its exit status (-1 when it had to
    /// be SIGKILLed after 30 s, or was ended by a signal).
    @discardableResult
    func stop() -> Int32 {
        process.signal(SIGINT)
        guard case .exited(let code)? = process.wait(seconds: 30) else { return -1 }
        return code
    }

    /// One HTTP/1.1 request to the control interface: the status and the body.
    func control(_ method: String, _ path: String, body: String = "") throws -> (status: Int, body: String) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var sin = sockaddr_in()
        sin.sin_family = sa_family_t(AF_INET)
        sin.sin_port = in_port_t(UInt16(controlPort).bigEndian)
        sin.sin_addr.s_addr = inet_addr("127.0.0.1")
        let rc = withUnsafePointer(to: &sin) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard rc == 0 else { throw MockProcessError(message: "cannot connect to the control port") }
        let request = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
        _ = request.withCString { send(fd, $0, strlen($0), 0) }
        var response: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }
            response += buffer[0..<n]
        }
        let text = String(decoding: response, as: UTF8.self)
        guard let split = text.range(of: "\r\n\r\n"), let m = text.firstMatch(of: /^HTTP\/1\.1 (\d+)/) else {
            throw MockProcessError(message: "not an HTTP response: \(text)")
        }
        return (Int(m.1)!, String(text[split.upperBound...]))
    }

    /// A control request whose body is JSON, decoded.
    func controlJSON(_ method: String, _ path: String, body: String = "") throws -> Any {
        let r = try control(method, path, body: body)
        return try JSONSerialization.jsonObject(with: Data(r.body.utf8), options: [.fragmentsAllowed])
    }
}
