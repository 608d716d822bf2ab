#if canImport(Glibc)
import Glibc
#endif
import APNsMock
import PushCore

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
            OptionSpec("port-file", value: "FILE", help: "write the port number to FILE once listening"),
            // Authentication
            OptionSpec("key-id", value: "ID", repeatable: true, help: "token key id (kid)"),
            OptionSpec("team-id", value: "TEAM", repeatable: true, help: "team id (iss) of that key"),
            OptionSpec("auth-key", value: "FILE", repeatable: true, help: "that key: .p8 or public PEM"),
            OptionSpec("token-max-age", value: "SECONDS", help: "ExpiredProviderToken after this age (default 3600)"),
            OptionSpec("token-update-interval", value: "SECONDS",
                       help: "TooManyProviderTokenUpdates when a connection changes token sooner (default 1200)"),
            OptionSpec("client-ca", value: "FILE", help: "accept client certificates issued by this CA (certificate auth)"),
            OptionSpec("allowed-topic", value: "TOPIC", repeatable: true, help: "token auth may push only to these (else TopicDisallowed)"),
            OptionSpec("token-topic", value: "TOKEN=TOPIC", repeatable: true,
                       help: "the token belongs to TOPIC (others get DeviceTokenNotForTopic)"),
            // Broadcast push
            OptionSpec("channel-port", value: "N", help: "serve the channel management API on port N too (0: any; default off)"),
            OptionSpec("channel-port-file", value: "FILE", help: "serve the channel management API and write its port to FILE"),
            OptionSpec("channel-limit", value: "N", help: "channels per app before CannotCreateChannelConfig (default 10000)"),
            OptionSpec("broadcast-disabled", value: "BUNDLE", repeatable: true,
                       help: "broadcasts and channel requests for BUNDLE get FeatureNotEnabled"),
            // HTTP/2 and responses
            OptionSpec("max-streams", value: "N", help: "MAX_CONCURRENT_STREAMS after the first success (default 1000)"),
            OptionSpec("development", help: "answer with apns-unique-id, as the sandbox environment does"),
            OptionSpec("lenient-initial-limit",
                       help: "before the client acknowledges SETTINGS, refuse excess streams instead of GOAWAY"),
            // Faults
            OptionSpec("goaway-after", value: "N", help: "GOAWAY after N answered requests per connection"),
            OptionSpec("goaway-reason", value: "REASON", help: "the GOAWAY's JSON reason (default Shutdown)"),
            OptionSpec("refuse-every", value: "N", help: "reset every Nth request stream with REFUSED_STREAM"),
            OptionSpec("drop-limit-after-rejection", help: "MAX_CONCURRENT_STREAMS=1 after a non-200, raised after the next 200"),
            OptionSpec("unregistered", value: "TOKEN[=MS]", repeatable: true, help: "410 Unregistered with timestamp MS (default now)"),
            OptionSpec("too-many-requests", value: "TOKEN", repeatable: true, help: "429 TooManyRequests for TOKEN"),
            OptionSpec("status-500-every", value: "N", help: "every Nth request gets 500 InternalServerError"),
            OptionSpec("status-503-every", value: "N", help: "every Nth request gets 503 ServiceUnavailable"),
            OptionSpec("status-500-rate", value: "P", help: "a request gets 500 with probability P (0..1)"),
            OptionSpec("status-503-rate", value: "P", help: "a request gets 503 with probability P (0..1)"),
            OptionSpec("stall-every", value: "N", help: "every Nth request is never answered"),
            OptionSpec("stall-token", value: "TOKEN", repeatable: true, help: "requests for TOKEN are never answered"),
            OptionSpec("delay-ms", value: "MS", help: "send every answer MS milliseconds late"),
            OptionSpec("kill-after", value: "N", help: "close a connection abruptly after N answered requests"),
            OptionSpec("refuse-connections-ms", value: "MS", help: "close new connections at once for MS milliseconds"),
            OptionSpec("expire-tokens-ms", value: "MS", help: "answer every token request 403 ExpiredProviderToken for MS milliseconds"),
            OptionSpec("refuse-client-certificates", help: "close certificate connections right after the TLS handshake (no alert)"),
            OptionSpec("seed", value: "N", help: "seed for the random rates (default 1)"),
            // Record and control
            OptionSpec("record", help: "record every request (off by default: the record grows with each request)"),
            OptionSpec("record-limit", value: "N", help: "keep at most N records (default 10000000)"),
            OptionSpec("control-port", value: "N", help: "control interface port on 127.0.0.1 (0: any; default off)"),
            OptionSpec("control-port-file", value: "FILE", help: "start the control interface and write its port to FILE"),
        ],
        notes: """
        Token authentication is on when --key-id/--team-id/--auth-key are given (the i-th of each
        form one key). Prints 'listening on HOST:PORT' once ready (and 'control on 127.0.0.1:PORT').
        Token connections start at MAX_CONCURRENT_STREAMS=1, and a client that opens more streams
        than allowed gets GOAWAY(REFUSED_STREAM), as from APNs: h2load -m N may do that before it
        has read the server's SETTINGS. Benchmark h2load without token keys (accept-all mode), or
        pass --lenient-initial-limit.

        Control interface (HTTP/1.1, JSON): GET /stats, GET /record, POST /record/reset,
        GET /faults, POST /faults with {"goaway_after_requests":N, "goaway_reason":"...",
        "refuse_every_nth_stream":N, "drop_limit_to_one_after_rejection":true,
        "unregistered_tokens":{"TOKEN":MS}, "too_many_requests_tokens":["TOKEN"],
        "status_500_every_nth":N, "status_503_every_nth":N, "status_500_rate":P,
        "status_503_rate":P, "stall_every_nth":N, "stall_tokens":["TOKEN"], "response_delay_ms":MS,
        "kill_connection_after_requests":N, "refuse_connections_ms":MS, "expire_tokens_ms":MS,
        "refuse_client_certificates":BOOL, "seed":N}: it replaces
        the faults (absent keys are off). Example:
          curl -s -d '{"stall_every_nth":10}' http://127.0.0.1:$(cat F)/faults
        """,
        run: run)

    static func run(_ args: ParsedArguments) throws(UsageError) -> Int32 {
        var config = MockServer.Configuration(certificateChainFile: try args.required("cert"),
                                              privateKeyFile: try args.required("key"))
        if let host = args.value("host") { config.host = host }
        config.port = try args.integer("port", default: 0, in: 0...65535)
        config.maxConcurrentStreams = try args.integer("max-streams", default: 1000, in: 1...Int(Int32.max))
        config.tokenMaxAgeSeconds = Int64(try args.integer("token-max-age", default: 3600, in: 1...Int(Int32.max)))
        config.minTokenUpdateIntervalSeconds = Int64(try args.integer("token-update-interval", default: 1200, in: 0...Int(Int32.max)))
        config.clientCAFile = args.value("client-ca")
        config.allowedTopics = Set(args.all("allowed-topic"))
        for pair in args.all("token-topic") {
            let (token, topic) = try split(pair, option: "token-topic")
            guard let topic else { throw UsageError("--token-topic needs TOKEN=TOPIC, got '\(pair)'") }
            config.deviceTokenTopics[token] = topic
        }
        config.developmentMode = args.has("development")
        config.strictInitialStreamLimit = !args.has("lenient-initial-limit")
        config.recordRequests = args.has("record")
        config.recordLimit = try args.integer("record-limit", default: 10_000_000, in: 0...Int(Int32.max))
        if args.value("control-port") != nil || args.value("control-port-file") != nil {
            config.controlPort = try args.integer("control-port", default: 0, in: 0...65535)
        }
        config.faults = try faults(args)
        if args.value("channel-port") != nil || args.value("channel-port-file") != nil {
            config.channelManagementPort = try args.integer("channel-port", default: 0, in: 0...65535)
        }
        config.channels = ChannelRegistry(limit: try args.integer("channel-limit", default: 10_000, in: 0...Int(Int32.max)),
                                          disabledBundleIds: Set(args.all("broadcast-disabled")))

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
        // The control port first: a script that sees the port file may use the control
        // interface at once.
        if let controlFile = args.value("control-port-file"), !writeFile(controlFile, "\(server.controlPort)\n") {
            Console.err("swiftpush mock: cannot write \(controlFile): \(String(cString: strerror(errno)))")
            server.stop()
            return 1
        }
        if let channelFile = args.value("channel-port-file"), !writeFile(channelFile, "\(server.channelManagementPort)\n") {
            Console.err("swiftpush mock: cannot write \(channelFile): \(String(cString: strerror(errno)))")
            server.stop()
            return 1
        }
        if let portFile = args.value("port-file"), !writeFile(portFile, "\(server.port)\n") {
            Console.err("swiftpush mock: cannot write \(portFile): \(String(cString: strerror(errno)))")
            server.stop()
            return 1
        }
        Console.out("listening on \(shownHost):\(server.port)")
        if config.controlPort != nil { Console.out("control on 127.0.0.1:\(server.controlPort)") }
        if config.channelManagementPort != nil { Console.out("channel management on \(shownHost):\(server.channelManagementPort)") }

        var signal: Int32 = 0
        while sigwait(&stopSignals, &signal) != 0 {}
        server.stop()
        Console.out(server.stats().description)
        return 0
    }

    /// The faults given on the command line.
    private static func faults(_ args: ParsedArguments) throws(UsageError) -> MockFaults {
        var f = MockFaults()
        let count = 1...Int(Int32.max)
        f.goawayAfterRequests = try optionalInteger(args, "goaway-after", in: count)
        if let reason = args.value("goaway-reason") { f.goawayReason = reason }
        f.refuseEveryNthStream = try optionalInteger(args, "refuse-every", in: count)
        f.dropLimitToOneAfterRejection = args.has("drop-limit-after-rejection")
        for item in args.all("unregistered") {
            let (token, ms) = try split(item, option: "unregistered")
            if let ms {
                guard let t = Int64(ms), t >= 0 else { throw UsageError("--unregistered needs TOKEN[=MS], got '\(item)'") }
                f.unregisteredTokens[token] = t
            } else {
                f.unregisteredTokens[token] = SystemClock.shared.wallSeconds() * 1000
            }
        }
        f.tooManyRequestsTokens = Set(args.all("too-many-requests"))
        f.status500EveryNth = try optionalInteger(args, "status-500-every", in: count)
        f.status503EveryNth = try optionalInteger(args, "status-503-every", in: count)
        f.status500Rate = try rate(args, "status-500-rate")
        f.status503Rate = try rate(args, "status-503-rate")
        f.stallEveryNth = try optionalInteger(args, "stall-every", in: count)
        f.stallTokens = Set(args.all("stall-token"))
        f.responseDelayMillis = try args.integer("delay-ms", default: 0, in: 0...3_600_000)
        f.killConnectionAfterRequests = try optionalInteger(args, "kill-after", in: count)
        if let ms = try optionalInteger(args, "refuse-connections-ms", in: 0...Int(Int32.max)) {
            f.refuseConnectionsUntil = MonotonicTime.nanos() + UInt64(ms) * 1_000_000
        }
        if let ms = try optionalInteger(args, "expire-tokens-ms", in: 0...Int(Int32.max)) {
            f.expireTokensUntil = MonotonicTime.nanos() + UInt64(ms) * 1_000_000
        }
        f.refuseClientCertificates = args.has("refuse-client-certificates")
        f.seed = UInt64(try args.integer("seed", default: 1, in: 0...Int.max))
        return f
    }

    private static func optionalInteger(_ args: ParsedArguments, _ name: String, in range: ClosedRange<Int>) throws(UsageError) -> Int? {
        guard args.value(name) != nil else { return nil }
        return try args.integer(name, default: 0, in: range)
    }

    private static func rate(_ args: ParsedArguments, _ name: String) throws(UsageError) -> Double {
        guard let text = args.value(name) else { return 0 }
        guard let p = Double(text), p >= 0, p <= 1 else { throw UsageError("--\(name) needs a probability in 0...1, got '\(text)'") }
        return p
    }

    /// `A=B` → (A, B); `A` → (A, nil).
    private static func split(_ item: String, option: String) throws(UsageError) -> (String, String?) {
        guard let eq = item.firstIndex(of: "=") else {
            guard !item.isEmpty else { throw UsageError("--\(option) needs a value") }
            return (item, nil)
        }
        let key = String(item[..<eq])
        guard !key.isEmpty else { throw UsageError("--\(option): nothing before '=' in '\(item)'") }
        return (key, String(item[item.index(after: eq)...]))
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
