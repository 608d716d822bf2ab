import Foundation
import SwiftPushRedis

/// A `redis-server` of the test's own on a free loopback port: in the clear, or TLS only
/// (`--port 0 --tls-port P`) with the test PKI's server certificate. Killed on `stop` or deinit.
final class RedisServerProcess {
    /// The port it listens on (TLS or plain).
    let port: Int
    private let process = Process()
    private let directory: String

    /// Starts `redis-server` with `arguments` added to the port, directory and persistence
    /// options, and waits (bounded) until it accepts connections.
    init(tls: Bool, arguments: [String] = []) throws {
        port = RedisTestSupport.freePort()
        directory = RedisTestSupport.temporaryDirectory("server")
        let pki = RedisTestSupport.pki
        var args = tls
            ? ["--port", "0", "--tls-port", String(port), "--tls-cert-file", pki + "/server.pem",
               "--tls-key-file", pki + "/server.key", "--tls-ca-cert-file", pki + "/ca.pem", "--tls-auth-clients", "no"]
            : ["--port", String(port)]
        // Verbose: the log then has a line per TCP connection accepted, TLS handshake or not
        // (INFO's total_connections_received counts only those whose handshake succeeded).
        args += ["--bind", "127.0.0.1", "--dir", directory, "--save", "", "--appendonly", "no",
                 "--logfile", directory + "/redis.log", "--loglevel", "verbose"]
        args += arguments
        process.executableURL = URL(fileURLWithPath: "/usr/bin/redis-server")
        process.arguments = args
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        guard waitUntil(seconds: 20, { RedisTestSupport.accepts(port: port) || !process.isRunning }), process.isRunning else {
            stop()
            let log = (try? String(contentsOfFile: directory + "/redis.log", encoding: .utf8)) ?? ""
            throw StartError(description: "redis-server did not start: \(log.suffix(400))")
        }
        // The probe's connection is logged when the server's loop takes it: wait for that, so
        // that a test's count of accepted connections starts from a settled figure.
        _ = waitUntil(seconds: 10) { acceptedConnections >= 1 }
    }

    /// Why a server did not start.
    struct StartError: Error, CustomStringConvertible { let description: String }

    /// TCP connections the server has accepted so far (its log's "Accepted" lines).
    var acceptedConnections: Int {
        let log = (try? String(contentsOfFile: directory + "/redis.log", encoding: .utf8)) ?? ""
        return log.split(separator: "\n").filter { $0.contains(" Accepted ") }.count
    }

    /// The node to connect to, by name or address.
    func node(host: String = "localhost") -> RedisNode { RedisNode(host: host, port: port) }

    /// Stops it (SIGKILL: nothing of it needs to survive) and waits for it.
    func stop() {
        if process.isRunning {
            process.interrupt()
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(atPath: directory)
    }

    deinit { stop() }
}
