#if canImport(Glibc)
import Glibc
#endif
import APNsMock
import ArgumentParser
import PushCore

/// `swiftpush mock`: runs the mock APNs server until SIGINT or SIGTERM, then prints its
/// counters.
struct MockCommand: StatusCommand {
    static let configuration = CommandConfiguration(
        commandName: "mock",
        abstract: "Run a mock APNs server (TLS + HTTP/2) until interrupted.",
        usage: "swiftpush mock (--cert FILE --key FILE | --quickstart DIR) [options]",
        discussion: """
        --quickstart DIR: a first try of the examples with no PKI of your own.
        Makes (or keeps from an earlier run) in DIR a test CA (ca.pem), a server
        certificate for localhost/127.0.0.1 and an ES256 token key
        AuthKey_TESTKEY001.p8 (key id TESTKEY001, team TEAM123456), serves with
        them, and prints the APNS_* variables the examples read, also written to
        DIR/env.sh (the port changes at each start: source it again after a
        restart).

        Token authentication is on when --key-id/--team-id/--auth-key are given (the
        i-th of each form one key). Prints 'listening on HOST:PORT' once ready (and
        'control on 127.0.0.1:PORT').
        Token connections start at MAX_CONCURRENT_STREAMS=1, and a client that opens
        more streams than allowed gets GOAWAY(REFUSED_STREAM), as from APNs: h2load
        -m N may do that before it has read the server's SETTINGS. Benchmark h2load
        without token keys (accept-all mode), or pass --lenient-initial-limit.

        Control interface (HTTP/1.1, JSON): GET /stats, GET /record,
        POST /record/reset, GET /faults, POST /faults with
        {"goaway_after_requests":N, "goaway_reason":"...",
        "refuse_every_nth_stream":N, "drop_limit_to_one_after_rejection":true,
        "unregistered_tokens":{"TOKEN":MS}, "too_many_requests_tokens":["TOKEN"],
        "status_500_every_nth":N, "status_503_every_nth":N, "status_500_rate":P,
        "status_503_rate":P, "stall_every_nth":N, "stall_tokens":["TOKEN"],
        "response_delay_ms":MS, "kill_connection_after_requests":N,
        "refuse_connections_ms":MS, "expire_tokens_ms":MS,
        "refuse_client_certificates":BOOL, "seed":N}: it replaces the faults (absent
        keys are off). Example:
          curl -s -d '{"stall_every_nth":10}' http://127.0.0.1:$(cat F)/faults
        """)

    @Option(help: ArgumentHelp("make or reuse a test PKI in DIR, serve with it, print and write DIR/env.sh (see below)", valueName: "DIR"),
            completion: .directory)
    var quickstart: String?
    @Option(help: ArgumentHelp("server certificate chain (PEM), required without --quickstart", valueName: "FILE"), completion: .file())
    var cert: String?
    @Option(help: ArgumentHelp("server private key (PEM), required without --quickstart", valueName: "FILE"), completion: .file())
    var key: String?
    @Option(help: ArgumentHelp("IP address to listen on (default 127.0.0.1)", valueName: "ADDR"))
    var host: String?
    @Option(help: ArgumentHelp("TCP port, 0 for any free one (default 0)", valueName: "N"))
    var port: Int?
    @Option(help: ArgumentHelp("write the port number to FILE once listening", valueName: "FILE"), completion: .file())
    var portFile: String?
    // Authentication
    @Option(name: .customLong("key-id"), help: ArgumentHelp("token key id (kid) (repeatable)", valueName: "ID"))
    var keyID: [String] = []
    @Option(name: .customLong("team-id"), help: ArgumentHelp("team id (iss) of that key (repeatable)", valueName: "TEAM"))
    var teamID: [String] = []
    @Option(help: ArgumentHelp("that key: .p8 or public PEM (repeatable)", valueName: "FILE"), completion: .file())
    var authKey: [String] = []
    @Option(help: ArgumentHelp("ExpiredProviderToken after this age (default 3600)", valueName: "SECONDS"))
    var tokenMaxAge: Int?
    @Option(help: ArgumentHelp("TooManyProviderTokenUpdates when a connection changes token sooner (default 1200)", valueName: "SECONDS"))
    var tokenUpdateInterval: Int?
    @Option(name: .customLong("client-ca"), help: ArgumentHelp("accept client certificates issued by this CA (certificate auth)", valueName: "FILE"), completion: .file())
    var clientCA: String?
    @Option(help: ArgumentHelp("token auth may push only to these (else TopicDisallowed) (repeatable)", valueName: "TOPIC"))
    var allowedTopic: [String] = []
    @Option(help: ArgumentHelp("the token belongs to TOPIC (others get DeviceTokenNotForTopic) (repeatable)", valueName: "TOKEN=TOPIC"))
    var tokenTopic: [String] = []
    // Broadcast push
    @Option(help: ArgumentHelp("serve the channel management API on port N too (0: any; default off)", valueName: "N"))
    var channelPort: Int?
    @Option(help: ArgumentHelp("serve the channel management API and write its port to FILE", valueName: "FILE"), completion: .file())
    var channelPortFile: String?
    @Option(help: ArgumentHelp("channels per app before CannotCreateChannelConfig (default 10000)", valueName: "N"))
    var channelLimit: Int?
    @Option(help: ArgumentHelp("broadcasts and channel requests for BUNDLE get FeatureNotEnabled (repeatable)", valueName: "BUNDLE"))
    var broadcastDisabled: [String] = []
    // HTTP/2 and responses
    @Option(help: ArgumentHelp("MAX_CONCURRENT_STREAMS after the first success (default 1000)", valueName: "N"))
    var maxStreams: Int?
    @Flag(help: "answer with apns-unique-id, as the sandbox environment does")
    var development = false
    @Flag(help: "before the client acknowledges SETTINGS, refuse excess streams instead of GOAWAY")
    var lenientInitialLimit = false
    @Flag(help: "accept device tokens of any length (default: outside 16-200 bytes is 400 BadDeviceToken)")
    var lenientDeviceTokens = false
    // Faults
    @Option(help: ArgumentHelp("GOAWAY after N answered requests per connection", valueName: "N"))
    var goawayAfter: Int?
    @Option(help: ArgumentHelp("the GOAWAY's JSON reason (default Shutdown)", valueName: "REASON"))
    var goawayReason: String?
    @Option(help: ArgumentHelp("reset every Nth request stream with REFUSED_STREAM", valueName: "N"))
    var refuseEvery: Int?
    @Flag(help: "MAX_CONCURRENT_STREAMS=1 after a non-200, raised after the next 200")
    var dropLimitAfterRejection = false
    @Option(help: ArgumentHelp("410 Unregistered with timestamp MS (default now) (repeatable)", valueName: "TOKEN[=MS]"))
    var unregistered: [String] = []
    @Option(help: ArgumentHelp("429 TooManyRequests for TOKEN (repeatable)", valueName: "TOKEN"))
    var tooManyRequests: [String] = []
    @Option(name: .customLong("status-500-every"), help: ArgumentHelp("every Nth request gets 500 InternalServerError", valueName: "N"))
    var status500Every: Int?
    @Option(name: .customLong("status-503-every"), help: ArgumentHelp("every Nth request gets 503 ServiceUnavailable", valueName: "N"))
    var status503Every: Int?
    @Option(name: .customLong("status-500-rate"), help: ArgumentHelp("a request gets 500 with probability P (0..1)", valueName: "P"))
    var status500Rate: String?
    @Option(name: .customLong("status-503-rate"), help: ArgumentHelp("a request gets 503 with probability P (0..1)", valueName: "P"))
    var status503Rate: String?
    @Option(help: ArgumentHelp("every Nth request is never answered", valueName: "N"))
    var stallEvery: Int?
    @Option(help: ArgumentHelp("requests for TOKEN are never answered (repeatable)", valueName: "TOKEN"))
    var stallToken: [String] = []
    @Option(help: ArgumentHelp("send every answer MS milliseconds late", valueName: "MS"))
    var delayMs: Int?
    @Option(help: ArgumentHelp("close a connection abruptly after N answered requests", valueName: "N"))
    var killAfter: Int?
    @Option(help: ArgumentHelp("close new connections at once for MS milliseconds", valueName: "MS"))
    var refuseConnectionsMs: Int?
    @Option(help: ArgumentHelp("answer every token request 403 ExpiredProviderToken for MS milliseconds", valueName: "MS"))
    var expireTokensMs: Int?
    @Flag(help: "close certificate connections right after the TLS handshake (no alert)")
    var refuseClientCertificates = false
    @Option(help: ArgumentHelp("seed for the random rates (default 1)", valueName: "N"))
    var seed: Int?
    // Record and control
    @Flag(help: "record every request (off by default: the record grows with each request)")
    var record = false
    @Option(help: ArgumentHelp("keep at most N records (default 10000000)", valueName: "N"))
    var recordLimit: Int?
    @Option(help: ArgumentHelp("control interface port on 127.0.0.1 (0: any; default off)", valueName: "N"))
    var controlPort: Int?
    @Option(help: ArgumentHelp("start the control interface and write its port to FILE", valueName: "FILE"), completion: .file())
    var controlPortFile: String?

    func validate() throws(ValidationError) {
        if quickstart != nil {
            if cert != nil || key != nil { throw ValidationError("--quickstart makes its own certificate: leave out --cert and --key") }
        } else {
            if cert == nil { throw ValidationError("missing --cert") }
            if key == nil { throw ValidationError("missing --key") }
        }
        let count = 1...Int(Int32.max)
        try checkRange(port, "port", 0...65535)
        try checkRange(maxStreams, "max-streams", count)
        try checkRange(tokenMaxAge, "token-max-age", count)
        try checkRange(tokenUpdateInterval, "token-update-interval", 0...Int(Int32.max))
        try checkRange(recordLimit, "record-limit", 0...Int(Int32.max))
        try checkRange(controlPort, "control-port", 0...65535)
        try checkRange(channelPort, "channel-port", 0...65535)
        try checkRange(channelLimit, "channel-limit", 0...Int(Int32.max))
        try checkRange(goawayAfter, "goaway-after", count)
        try checkRange(refuseEvery, "refuse-every", count)
        try checkRange(status500Every, "status-500-every", count)
        try checkRange(status503Every, "status-503-every", count)
        try checkRange(stallEvery, "stall-every", count)
        try checkRange(delayMs, "delay-ms", 0...3_600_000)
        try checkRange(killAfter, "kill-after", count)
        try checkRange(refuseConnectionsMs, "refuse-connections-ms", 0...Int(Int32.max))
        try checkRange(expireTokensMs, "expire-tokens-ms", 0...Int(Int32.max))
        try checkRange(seed, "seed", 0...Int.max)
        _ = try Self.rate(status500Rate, "status-500-rate")
        _ = try Self.rate(status503Rate, "status-503-rate")
        guard keyID.count == teamID.count, keyID.count == authKey.count else {
            throw ValidationError("--key-id, --team-id and --auth-key must be given the same number of times")
        }
    }

    func execute() throws(ValidationError) -> Int32 {
        var pki: QuickstartPKI?
        if let quickstart {
            do throws(QuickstartPKI.Failure) {
                pki = try QuickstartPKI.prepare(directory: quickstart)
            } catch {
                Console.err("swiftpush mock: --quickstart: \(error.description)")
                return 1
            }
        }
        // validate() checked that there are either both files or --quickstart.
        var config = MockServer.Configuration(certificateChainFile: pki?.serverCertificateFile ?? cert!,
                                              privateKeyFile: pki?.serverKeyFile ?? key!)
        if let host { config.host = host }
        config.port = port ?? 0
        config.maxConcurrentStreams = maxStreams ?? 1000
        config.tokenMaxAgeSeconds = Int64(tokenMaxAge ?? 3600)
        config.minTokenUpdateIntervalSeconds = Int64(tokenUpdateInterval ?? 1200)
        config.clientCAFile = clientCA
        config.allowedTopics = Set(allowedTopic)
        for pair in tokenTopic {
            let (token, topic) = try Self.split(pair, option: "token-topic")
            guard let topic else { throw ValidationError("--token-topic needs TOKEN=TOPIC, got '\(pair)'") }
            config.deviceTokenTopics[token] = topic
        }
        config.developmentMode = development
        config.strictInitialStreamLimit = !lenientInitialLimit
        config.lenientDeviceTokens = lenientDeviceTokens
        config.recordRequests = record
        config.recordLimit = recordLimit ?? 10_000_000
        if controlPort != nil || controlPortFile != nil {
            config.controlPort = controlPort ?? 0
        }
        config.faults = try faults()
        if channelPort != nil || channelPortFile != nil {
            config.channelManagementPort = channelPort ?? 0
        }
        config.channels = ChannelRegistry(limit: channelLimit ?? 10_000, disabledBundleIds: Set(broadcastDisabled))

        do throws(MockServer.StartError) {
            for i in keyID.indices { // validate() checked that the three lists have the same length
                config.tokenKeys.append(try MockServer.TokenKey(keyID: keyID[i], teamID: teamID[i], file: authKey[i]))
            }
            if let pki {
                config.tokenKeys.append(try MockServer.TokenKey(keyID: QuickstartPKI.keyID, teamID: QuickstartPKI.teamID, file: pki.tokenKeyFile))
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
        if let controlFile = controlPortFile, !Self.writeFile(controlFile, "\(server.controlPort)\n") {
            Console.err("swiftpush mock: cannot write \(controlFile): \(String(cString: strerror(errno)))")
            server.stop()
            return 1
        }
        if let channelFile = channelPortFile, !Self.writeFile(channelFile, "\(server.channelManagementPort)\n") {
            Console.err("swiftpush mock: cannot write \(channelFile): \(String(cString: strerror(errno)))")
            server.stop()
            return 1
        }
        if let portFile, !Self.writeFile(portFile, "\(server.port)\n") {
            Console.err("swiftpush mock: cannot write \(portFile): \(String(cString: strerror(errno)))")
            server.stop()
            return 1
        }
        Console.out("listening on \(shownHost):\(server.port)")
        if config.controlPort != nil { Console.out("control on 127.0.0.1:\(server.controlPort)") }
        if config.channelManagementPort != nil { Console.out("channel management on \(shownHost):\(server.channelManagementPort)") }
        if let pki, !Self.announce(pki, port: server.port) {
            server.stop()
            return 1
        }

        var signal: Int32 = 0
        while sigwait(&stopSignals, &signal) != 0 {}
        server.stop()
        Console.out(server.stats().description)
        return 0
    }

    /// The faults given on the command line.
    private func faults() throws(ValidationError) -> MockFaults {
        var f = MockFaults()
        f.goawayAfterRequests = goawayAfter
        if let goawayReason { f.goawayReason = goawayReason }
        f.refuseEveryNthStream = refuseEvery
        f.dropLimitToOneAfterRejection = dropLimitAfterRejection
        for item in unregistered {
            let (token, ms) = try Self.split(item, option: "unregistered")
            if let ms {
                guard let t = Int64(ms), t >= 0 else { throw ValidationError("--unregistered needs TOKEN[=MS], got '\(item)'") }
                f.unregisteredTokens[token] = t
            } else {
                f.unregisteredTokens[token] = SystemClock.shared.wallSeconds() * 1000
            }
        }
        f.tooManyRequestsTokens = Set(tooManyRequests)
        f.status500EveryNth = status500Every
        f.status503EveryNth = status503Every
        f.status500Rate = try Self.rate(status500Rate, "status-500-rate")
        f.status503Rate = try Self.rate(status503Rate, "status-503-rate")
        f.stallEveryNth = stallEvery
        f.stallTokens = Set(stallToken)
        f.responseDelayMillis = delayMs ?? 0
        f.killConnectionAfterRequests = killAfter
        if let ms = refuseConnectionsMs {
            f.refuseConnectionsUntil = MonotonicTime.nanos() + UInt64(ms) * 1_000_000
        }
        if let ms = expireTokensMs {
            f.expireTokensUntil = MonotonicTime.nanos() + UInt64(ms) * 1_000_000
        }
        f.refuseClientCertificates = refuseClientCertificates
        f.seed = UInt64(seed ?? 1)
        return f
    }

    /// A probability option: 0 when absent.
    private static func rate(_ text: String?, _ name: String) throws(ValidationError) -> Double {
        guard let text else { return 0 }
        guard let p = Double(text), p >= 0, p <= 1 else { throw ValidationError("--\(name) needs a probability in 0...1, got '\(text)'") }
        return p
    }

    /// `A=B` → (A, B); `A` → (A, nil).
    private static func split(_ item: String, option: String) throws(ValidationError) -> (String, String?) {
        guard let eq = item.firstIndex(of: "=") else {
            guard !item.isEmpty else { throw ValidationError("--\(option) needs a value") }
            return (item, nil)
        }
        let key = String(item[..<eq])
        guard !key.isEmpty else { throw ValidationError("--\(option): nothing before '=' in '\(item)'") }
        return (key, String(item[item.index(after: eq)...]))
    }

    /// Writes `text` to `path` (replacing it). Written to a temporary name and renamed, so a
    /// script polling for the file never reads it half-written.
    static func writeFile(_ path: String, _ text: String) -> Bool {
        let temporary = path + ".tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return false }
        let ok = text.withCString { write(fd, $0, strlen($0)) == strlen($0) }
        close(fd)
        return ok && rename(temporary, path) == 0
    }
}
