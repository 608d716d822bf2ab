#if canImport(Glibc)
import Glibc
#endif
import APNsMock

/// `swiftpush mock`: runs the mock APNs server until SIGINT or SIGTERM, then prints its
/// counters.
enum MockCommand {
    static let subcommand = Subcommand(
        name: "mock",
        summary: "Run a mock APNs server (TLS + HTTP/2) until interrupted.",
        options: [
            OptionSpec("cert", value: "FILE", help: "server certificate chain (PEM), required"),
            OptionSpec("key", value: "FILE", help: "server private key (PEM), required"),
            OptionSpec("host", value: "ADDR", help: "IP address to listen on (default 127.0.0.1)"),
            OptionSpec("port", value: "N", help: "TCP port, 0 for any free one (default 0)"),
            OptionSpec("key-id", value: "ID", repeatable: true, help: "token key id (kid)"),
            OptionSpec("team-id", value: "TEAM", repeatable: true, help: "team id (iss) of that key"),
            OptionSpec("auth-key", value: "FILE", repeatable: true, help: "that key: .p8 or public PEM"),
            OptionSpec("token-max-age", value: "SECONDS", help: "ExpiredProviderToken after this age (default 3600)"),
            OptionSpec("max-streams", value: "N", help: "MAX_CONCURRENT_STREAMS after the first success (default 1000)"),
            OptionSpec("client-ca", value: "FILE", help: "require client certificates issued by this CA"),
            OptionSpec("port-file", value: "FILE", help: "write the port number to FILE once listening"),
        ],
        notes: """
        Token authentication is on when --key-id/--team-id/--auth-key are given (the i-th of each
        form one key). Prints 'listening on HOST:PORT' once ready.
        """,
        run: run)

    static func run(_ args: ParsedArguments) throws(UsageError) -> Int32 {
        var config = MockServer.Configuration(certificateChainFile: try args.required("cert"),
                                              privateKeyFile: try args.required("key"))
        if let host = args.value("host") { config.host = host }
        config.port = try args.integer("port", default: 0, in: 0...65535)
        config.maxConcurrentStreams = try args.integer("max-streams", default: 1000, in: 1...Int(Int32.max))
        config.tokenMaxAgeSeconds = Int64(try args.integer("token-max-age", default: 3600, in: 1...Int(Int32.max)))
        config.clientCAFile = args.value("client-ca")
        let ids = args.all("key-id"), teams = args.all("team-id"), files = args.all("auth-key")
        guard ids.count == teams.count, ids.count == files.count else {
            throw UsageError("--key-id, --team-id and --auth-key must be given the same number of times")
        }
        do throws(MockServer.StartError) {
            for i in ids.indices {
                config.tokenKeys.append(try MockServer.TokenKey(keyID: ids[i], teamID: teams[i], file: files[i]))
            }
        } catch {
            Console.err("swiftpush mock: \(error.description)")
            return 1
        }

        // Block the stop signals before the server thread exists so that it inherits the mask
        // and only sigwait below ever sees them: no async signal handler needed.
        var stopSignals = sigset_t()
        sigemptyset(&stopSignals)
        sigaddset(&stopSignals, SIGINT)
        sigaddset(&stopSignals, SIGTERM)
        pthread_sigmask(SIG_BLOCK, &stopSignals, nil)

        let server = MockServer(configuration: config)
        do throws(MockServer.StartError) {
            try server.start()
        } catch {
            Console.err("swiftpush mock: \(error.description)")
            return 1
        }
        let shownHost = config.host.contains(":") ? "[\(config.host)]" : config.host
        if let portFile = args.value("port-file"), !writeFile(portFile, "\(server.port)\n") {
            Console.err("swiftpush mock: cannot write \(portFile): \(String(cString: strerror(errno)))")
            server.stop()
            return 1
        }
        Console.out("listening on \(shownHost):\(server.port)")

        var signal: Int32 = 0
        while sigwait(&stopSignals, &signal) != 0 {}
        server.stop()
        Console.out(server.stats().description)
        return 0
    }

    /// Writes `text` to `path` (replacing it). Written to a temporary name and renamed, so a
    /// script polling for the file never reads it half-written.
    private static func writeFile(_ path: String, _ text: String) -> Bool {
        let temporary = path + ".tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return false }
        let ok = text.withCString { write(fd, $0, strlen($0)) == strlen($0) }
        close(fd)
        return ok && rename(temporary, path) == 0
    }
}
