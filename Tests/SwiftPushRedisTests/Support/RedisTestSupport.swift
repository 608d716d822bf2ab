import Foundation
import PushCore
import SwiftPushRedis
import TestProcessSupport
#if canImport(Glibc)
import Glibc
#endif

/// Paths, processes and waits shared by the suites that run real redis-servers.
enum RedisTestSupport {
    /// The package's root directory.
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The test keys and certificates (scripts/make-test-pki.sh), made once per test process.
    static let pki: String = {
        let dir = NSTemporaryDirectory() + "swiftpush-redis-tests-\(getpid())"
        let (status, _) = run("/bin/bash", [root.appendingPathComponent("scripts/make-test-pki.sh").path, dir])
        precondition(status == 0, "make-test-pki.sh failed")
        return dir
    }()

    /// A new empty directory for one test's files.
    static func temporaryDirectory(_ label: String) -> String {
        let dir = NSTemporaryDirectory() + "swiftpush-redis-\(label)-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    /// Runs a command to its end (at most `seconds`, then it is killed); its exit status (-1
    /// when it could not start or had to be killed) and standard output. Standard error is
    /// passed through, so a failing helper explains itself in the test log.
    @discardableResult
    static func run(_ executable: String, _ arguments: [String], seconds: Double = 180) -> (Int32, String) {
        let (termination, output) = ChildProcess.run(executable, arguments, passErrors: true, seconds: seconds)
        guard case .exited(let code)? = termination else { return (-1, output) }
        return (code, output)
    }

    /// A TCP port nothing listens on now (bound to port 0, then released).
    static func freePort() -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var a = sockaddr_in()
        a.sin_family = sa_family_t(AF_INET)
        a.sin_addr.s_addr = inet_addr("127.0.0.1")
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) } }
        _ = withUnsafeMutablePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) } }
        return Int(UInt16(bigEndian: a.sin_port))
    }

    /// True once something accepts TCP connections on 127.0.0.1:`port`.
    static func accepts(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var a = sockaddr_in()
        a.sin_family = sa_family_t(AF_INET)
        a.sin_port = UInt16(port).bigEndian
        a.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &a) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
    }
}

/// Waits until `condition` holds (checked every 10 ms) or `seconds` pass; returns whether it
/// held. For conditions nothing signals (a server that starts listening).
@discardableResult
func waitUntil(seconds: Double, _ condition: () -> Bool) -> Bool {
    let until = MonotonicTime.nanos() + UInt64(seconds * 1e9)
    while !condition() {
        if MonotonicTime.nanos() >= until { return false }
        usleep(10_000) // between two looks at a condition that signals no one (see above)
    }
    return true
}

/// How long `body` takes, in milliseconds.
func millisecondsTaken(_ body: () throws -> Void) rethrows -> Double {
    let start = MonotonicTime.nanos()
    try body()
    return Double(MonotonicTime.nanos() - start) / 1e6
}
