import Foundation
import PushCore
import SwiftPushRedis
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

    /// Runs a command to completion; its exit status and standard output (standard error is
    /// passed through, so a failing helper explains itself in the test log). posix_spawn and
    /// waitpid rather than Foundation's Process, whose waitUntilExit was seen to hang here
    /// after a child that leaves daemons behind (the cluster helper) had exited.
    @discardableResult
    static func run(_ executable: String, _ arguments: [String]) -> (Int32, String) {
        let outputPath = temporaryDirectory("run") + "/stdout"
        defer { try? FileManager.default.removeItem(atPath: (outputPath as NSString).deletingLastPathComponent) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        guard posix_spawn(&pid, executable, &actions, nil, argv, environ) == 0 else { return (-1, "") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let output = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        // WIFEXITED / WEXITSTATUS by hand (macros): low 7 bits 0 means it exited normally.
        return ((status & 0x7f) == 0 ? (status >> 8) & 0xff : -1, output)
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
