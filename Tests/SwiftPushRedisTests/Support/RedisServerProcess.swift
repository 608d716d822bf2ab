import Foundation
import SwiftPushRedis
import TestProcessSupport

/// A `redis-server` of the test's own on a free loopback port: in the clear, or TLS only
/// (`--port 0 --tls-port P`) with the test PKI's server certificate. Killed on `stop` or deinit,
/// and with the test process whatever ends it (`ChildProcess`).
final class RedisServerProcess {
    /// The port it listens on (TLS or plain).
    let port: Int
    private let process: ChildProcess
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
        let process = try ChildProcess("/usr/bin/redis-server", args)
        self.process = process
        guard waitUntil(seconds: 20, { RedisTestSupport.accepts(port: port) || !process.isRunning }), process.isRunning else {
            stop()
            let log = TestFiles.readText(directory + "/redis.log") ?? ""
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
        let log = TestFiles.readText(directory + "/redis.log") ?? ""
        return log.split(separator: "\n").filter { $0.contains(" Accepted ") }.count
    }

    /// The node to connect to, by name or address.
    func node(host: String = "localhost") -> RedisNode { RedisNode(host: host, port: port) }

    /// Stops it (SIGKILL: nothing of it needs to survive) and reaps it (bounded).
    func stop() {
        process.kill()
        TestFiles.remove(directory)
    }

    deinit { stop() }
}
