#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import CSwiftPushABI
import PushCore
import PushClientCore
import PushTransport

/// `swiftpush send`: sends one notification to one or more device tokens and prints one line
/// per outcome, then a summary. Exit status: 0 when every notification was accepted, 1 when
/// any was rejected or failed (or no connection could be made), 2 for usage errors (including
/// unreadable files, invalid tokens and payloads: nothing is sent then).
struct SendCommand: StatusCommand {
    static let configuration = CommandConfiguration(
        commandName: "send",
        abstract: "Send a notification to one or more device tokens.",
        usage: "swiftpush send [options]",
        discussion: """
        Prints one line per notification:
          TOKEN ACCEPTED|REJECTED|FAILED STATUS REASON apns-id=ID
        (FAILED: no answer from APNs; the reason says why), then a summary line.
        Exit status: 0 all accepted, 1 something rejected or failed, 2 usage error.
        Background notifications need --push-type background (and
        --content-available). A broadcast (--channel ID, from 'swiftpush channels
        create') goes to every device subscribed to the channel: --topic names the
        app's bundle id, the push type is liveactivity, and --expiration defaults to
        0 (what a channel storing no message requires).
        example: swiftpush send --key AuthKey_ABC123DEFG.p8 --key-id ABC123DEFG \\
                   --team-id TEAM123456 --topic com.example.app --token 00fc13ad... \\
                   --title Hello --body 'from swiftpush'
        """)

    @Option(name: .customLong("token"), help: ArgumentHelp("a device token (repeatable)", valueName: "HEX"))
    var tokens: [String] = []
    @Option(help: ArgumentHelp("device tokens, one per line ('#' comments, blank lines skipped)", valueName: "FILE"))
    var tokensFile: String?
    @Option(help: ArgumentHelp("broadcast to this channel instead (iOS 18 Live Activities; --topic is the bundle id)", valueName: "ID"))
    var channel: String?
    @OptionGroup(title: "Connection options")
    var connection: ConnectionOptions
    @Option(help: ArgumentHelp("apns-topic (default: from --apns-file's bundle id)", valueName: "TOPIC"))
    var topic: String?
    @Option(help: ArgumentHelp("alert (default), background, voip, liveactivity, ...", valueName: "TYPE"))
    var pushType: String?
    @Option(help: ArgumentHelp("10, 5 or 1 (default: the push type's, 5 for background)", valueName: "N"))
    var priority: Int32?
    @Option(help: ArgumentHelp("apns-expiration: UNIX seconds, or 0 to try once", valueName: "SECONDS"))
    var expiration: String?
    @Option(name: .customLong("collapse-id"), help: ArgumentHelp("apns-collapse-id (at most 64 bytes)", valueName: "ID"))
    var collapseID: String?
    @Option(name: .customLong("apns-id"), help: ArgumentHelp("apns-id (one token only; default: generated)", valueName: "UUID"))
    var apnsID: String?
    @Option(help: ArgumentHelp("the JSON payload, sent as it is ('-': standard input)", valueName: "FILE"))
    var payload: String?
    @Option(help: ArgumentHelp("a .apns file: payload plus \"Simulator Target Bundle\"", valueName: "FILE"))
    var apnsFile: String?
    @Option(help: ArgumentHelp("payload from flags: aps.alert.title", valueName: "TEXT"))
    var title: String?
    @Option(help: ArgumentHelp("aps.alert.subtitle", valueName: "TEXT"))
    var subtitle: String?
    @Option(help: ArgumentHelp("aps.alert.body", valueName: "TEXT"))
    var body: String?
    @Option(help: ArgumentHelp("aps.badge (0 clears it)", valueName: "N"))
    var badge: Int?
    @Option(help: ArgumentHelp("aps.sound (e.g. default)", valueName: "NAME"))
    var sound: String?
    @Option(name: .customLong("thread-id"), help: ArgumentHelp("aps.thread-id", valueName: "ID"))
    var threadID: String?
    @Option(help: ArgumentHelp("aps.category", valueName: "NAME"))
    var category: String?
    @Flag(help: "aps.content-available: 1")
    var contentAvailable = false
    @Flag(help: "aps.mutable-content: 1")
    var mutableContent = false
    @Option(help: ArgumentHelp("a custom top-level key with a JSON value (repeatable)", valueName: "KEY=JSON"))
    var custom: [String] = []
    @Option(help: ArgumentHelp("how long to wait for a connection and each outcome (default 30)", valueName: "SECONDS"))
    var timeout: Int?
    @Flag(help: "print one JSON object per line instead of text")
    var json = false
    @Flag(name: [.customLong("verbose"), .customShort("v")],
          help: "print the library's log events (connections, back-off, tokens) to standard error")
    var verbose = false
    @Flag(help: "with --verbose: also DEBUG events (each connection attempt)")
    var debug = false

    /// Whether the payload comes from the payload flags (--title, --body, ...).
    var payloadFromFlags: Bool {
        [title, subtitle, body, sound, threadID, category].contains { $0 != nil } || badge != nil || !custom.isEmpty
            || contentAvailable || mutableContent
    }

    func validate() throws(ValidationError) {
        // Seconds, within the deadline option's range (it becomes the deadline).
        try checkRange(timeout, "timeout", 1...PushOption.deadlineMs.intRange.upperBound / 1000)
        try checkRange(badge, "badge", 0...Int(Int32.max))
        let sources = [payload != nil, apnsFile != nil, payloadFromFlags].filter { $0 }.count
        if sources == 0 { throw ValidationError("no payload: give --payload FILE, --apns-file FILE or --title/--body/... flags") }
        if sources > 1 { throw ValidationError("give one payload source: --payload, --apns-file or the payload flags") }
        if let pushType, PushType(headerValue: pushType) == nil {
            let names = PushType.allCases.map { "\($0.headerValue)" }.joined(separator: ", ")
            throw ValidationError("--push-type must be one of \(names); got '\(pushType)'")
        }
        if channel != nil {
            if !tokens.isEmpty || tokensFile != nil {
                throw ValidationError("--channel broadcasts to a channel: no --token or --tokens-file with it")
            }
            if let pushType, PushType(headerValue: pushType) != BroadcastRules.pushType {
                throw ValidationError("--channel broadcasts are --push-type liveactivity")
            }
        }
    }

    func execute() throws(ValidationError) -> Int32 {
        let request = try SendRequest(self)
        return request.deliver()
    }
}

/// Everything `send` needs, checked before any connection is made.
private struct SendRequest {
    var configuration = ClientConfiguration()
    var tokens: [String] = []
    var topic: [UInt8] = []
    var pushType = PushType.alert
    var priority: Int32 = 0
    var expiration: Int64?
    var collapseID: [UInt8]?
    var apnsID: [UInt8]?
    var payload: [UInt8] = []
    var timeoutMillis: Int32 = 30_000
    var json = false
    /// A broadcast's channel id (`--channel`): then `tokens` holds it alone, as the outcome's label.
    var channel: String?

    init(_ args: SendCommand) throws(ValidationError) {
        json = args.json
        if args.verbose {
            // The library's log events, one line each on stderr: "swiftpush: LEVEL event: message".
            let level = args.debug ? LogLevel.debug : LogLevel.info
            configuration.callbacks.log = LogCallback(function: { _, level, event, message in
                let name = LogLevel(rawValue: level).map { "\($0)".uppercased() } ?? "\(level)"
                Console.err("swiftpush: \(name) \(String(cString: event!)): \(String(cString: message!))")
            }, userData: nil, minLevel: level.rawValue)
        }
        timeoutMillis = Int32((args.timeout ?? 30) * 1000)
        try readDestination(args.connection)
        if let id = args.channel {
            if let v = Array(id.utf8).withUnsafeBytes({ BroadcastRules.checkChannelId($0) }) { throw ValidationError("--channel: \(v.message)") }
            channel = id
            pushType = BroadcastRules.pushType // a broadcast's only push type; --push-type may say it again
            expiration = 0 // required on a broadcast: try once unless --expiration says otherwise
        }
        try readHeaders(args)
        let bundleID = try readPayload(args)
        try readTopic(args, bundleID: bundleID)
        try readTokens(args)
        if apnsID != nil && tokens.count > 1 {
            throw ValidationError("--apns-id names one notification: give a single device token with it")
        }
    }

    private mutating func readDestination(_ connection: ConnectionOptions) throws(ValidationError) {
        try connection.apply(to: &configuration)
        configuration.timing.deadlineMillis = Int(timeoutMillis)
        configuration.timing.connectTimeoutMillis = min(Int(timeoutMillis), PushOption.connectTimeoutMs.defaultInt)
    }

    private mutating func readHeaders(_ args: SendCommand) throws(ValidationError) {
        if let name = args.pushType, let type = PushType(headerValue: name) { // validate() checked the name
            pushType = type
        }
        if let p = args.priority {
            if case .failure(let v) = NotificationRules.resolvePriority(p, pushType: pushType) { throw ValidationError(v.message) }
            priority = p
        }
        if let text = args.expiration {
            guard let seconds = Int64(text), NotificationRules.checkExpiration(seconds) == nil else {
                throw ValidationError("--expiration needs UNIX seconds or 0, got '\(text)'")
            }
            expiration = seconds
        }
        if let id = args.collapseID {
            let bytes = Array(id.utf8)
            if let v = bytes.withUnsafeBytes({ NotificationRules.checkCollapseId($0) }) { throw ValidationError(v.message) }
            collapseID = bytes
        }
        if let id = args.apnsID {
            let bytes = Array(id.lowercased().utf8)
            if let v = bytes.withUnsafeBytes({ NotificationRules.checkApnsId($0) }) { throw ValidationError(v.message) }
            apnsID = bytes
        }
    }

    /// The payload from its one source (validate() checked there is one); returns the .apns
    /// file's bundle id, if any.
    private mutating func readPayload(_ args: SendCommand) throws(ValidationError) -> String? {
        var bundleID: String?
        if let path = args.payload {
            payload = path == "-" ? try readFile("/dev/stdin", what: "standard input", limit: 1 << 20)
                                  : try readFile(path, what: "payload file", limit: 1 << 20)
        } else if let path = args.apnsFile {
            let contents = try readFile(path, what: ".apns file", limit: 1 << 20)
            do throws(ApnsFile.Failure) {
                let file = try ApnsFile(contents: contents)
                payload = file.payload
                bundleID = file.bundleID
            } catch {
                throw ValidationError(".apns file \(path): \(error.message)")
            }
        } else {
            payload = try buildPayload(args)
        }
        let violation = payload.withUnsafeBytes {
            channel == nil ? NotificationRules.checkPayload($0, pushType: pushType) : BroadcastRules.checkPayload($0)
        }
        if let violation { throw ValidationError(violation.message) }
        return bundleID
    }

    private func buildPayload(_ args: SendCommand) throws(ValidationError) -> [UInt8] {
        var b = PayloadBuilder()
        b.title = args.title
        b.subtitle = args.subtitle
        b.body = args.body
        b.badge = args.badge
        b.sound = args.sound.map { .named($0) }
        b.threadID = args.threadID
        b.category = args.category
        b.contentAvailable = args.contentAvailable
        b.mutableContent = args.mutableContent
        do throws(PayloadBuilder.Failure) {
            for item in args.custom {
                guard let eq = item.firstIndex(of: "=") else { throw PayloadBuilder.Failure(.badPayload, "--custom needs KEY=JSON, got '\(item)'") }
                try b.addCustom(key: String(item[..<eq]), json: Array(item[item.index(after: eq)...].utf8))
            }
            return channel == nil ? try b.build(for: pushType) : try b.build(limit: BroadcastRules.maxPayloadBytes)
        } catch {
            throw ValidationError(error.message)
        }
    }

    private mutating func readTopic(_ args: SendCommand, bundleID: String?) throws(ValidationError) {
        if let t = args.topic {
            topic = Array(t.utf8)
        } else if let bundleID {
            switch Array(bundleID.utf8).withUnsafeBytes({ pushType.topic(forBundleID: $0) }) {
            case .success(let t): topic = Array(t.utf8)
            case .failure(let v): throw ValidationError("topic from the .apns file's bundle id: \(v.message)")
            }
        } else {
            throw ValidationError("missing --topic (the app's bundle id, plus the push type's suffix)")
        }
        let violation = topic.withUnsafeBytes {
            channel == nil ? NotificationRules.checkTopic($0, pushType: pushType) : BroadcastRules.checkBundleId($0)
        }
        if let violation { throw ValidationError(violation.message) }
    }

    private mutating func readTokens(_ args: SendCommand) throws(ValidationError) {
        if let channel {
            tokens = [channel] // validate() checked that no --token or --tokens-file came with it
            return
        }
        tokens = args.tokens
        if let path = args.tokensFile {
            let text = String(decoding: try readFile(path, what: "tokens file", limit: 64 << 20), as: UTF8.self)
            for line in text.split(whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
                let token = line.trimmingSpaces
                if token.isEmpty || token.hasPrefix("#") { continue }
                tokens.append(token)
            }
        }
        if tokens.isEmpty { throw ValidationError("no device token: give --token HEX or --tokens-file FILE") }
        for token in tokens {
            if let v = Array(token.utf8).withUnsafeBytes({ NotificationRules.checkDeviceToken($0) }) {
                throw ValidationError("invalid device token '\(token)': \(v.message)")
            }
        }
    }

    private func readFile(_ path: String, what: String, limit: Int) throws(ValidationError) -> [UInt8] {
        do throws(FileBytes.ReadError) {
            return try FileBytes.read(path: path, limit: limit)
        } catch {
            throw ValidationError("cannot read \(what) \(path == "/dev/stdin" ? "" : path): \(error.description)")
        }
    }

    // MARK: - Sending

    /// Connects, sends to every token, prints every outcome as it arrives and a summary.
    func deliver() -> Int32 {
        let client: PushClient
        do throws(ClientError) {
            client = try PushClient(configuration: configuration)
        } catch {
            Console.err("swiftpush send: \(error.description)")
            return 1
        }
        if let e = client.waitUntilConnected(timeoutMillis: Int32(configuration.timing.connectTimeoutMillis)) {
            Console.err("swiftpush send: \(e.description)")
            client.close(drainMillis: 0)
            return 1
        }
        let shared = (topic: CBytes(topic), payload: CBytes(payload),
                      collapseID: collapseID.map(CBytes.init), apnsID: apnsID.map(CBytes.init))
        var printer = OutcomePrinter(tokens: tokens, json: json, label: channel == nil ? "token" : "channel")
        var sent = 0
        var results = [push_result](repeating: push_result(), count: 64)

        func drain(waitMillis: Int32) -> Bool {
            let r = results.withUnsafeMutableBytes {
                client.poll(into: $0.baseAddress!, max: 64, recordSize: MemoryLayout<push_result>.stride, timeoutMillis: waitMillis)
            }
            for i in 0..<r.count { printer.print(results[i]) }
            return !r.allDelivered
        }

        for (i, token) in tokens.enumerated() {
            let tokenBytes = CBytes(Array(token.utf8))
            var n = push_notification()
            n.struct_size = UInt32(MemoryLayout<push_notification>.size)
            n.push_type = pushType.rawValue
            n.priority = priority
            if let expiration {
                n.flags = PUSH_NOTIFICATION_HAS_EXPIRATION.rawValue
                n.expiration = expiration
            }
            n.tag = UInt64(i)
            if channel == nil {
                (n.device_token, n.device_token_len) = tokenBytes.argument
            } else {
                (n.channel_id, n.channel_id_len) = tokenBytes.argument
            }
            (n.topic, n.topic_len) = shared.topic.argument
            (n.payload, n.payload_len) = shared.payload.argument
            if let c = shared.collapseID { (n.collapse_id, n.collapse_id_len) = c.argument }
            if let a = shared.apnsID { (n.apns_id, n.apns_id_len) = a.argument }
            while true {
                let r = withUnsafePointer(to: &n) { client.send($0, count: 1, timeoutMillis: 0) }
                withExtendedLifetime(tokenBytes) {}
                guard let error = r.error else { sent += 1; break }
                if error.status == .queueFull, drain(waitMillis: 100) { continue }
                // Checked before connecting, so only a closing client gets here.
                printer.refused(token: token, error: error)
                break
            }
        }
        while printer.printed < sent, drain(waitMillis: 1000) {}
        client.close(drainMillis: 0)
        while drain(waitMillis: 0) && printer.printed < sent {}
        printer.summary()
        return printer.accepted == tokens.count ? 0 : 1
    }
}

/// Prints outcomes as text or JSON lines and counts them.
private struct OutcomePrinter {
    let tokens: [String]
    let json: Bool
    /// What `tokens` hold, as the JSON key: "token", or "channel" for a broadcast.
    let label: String
    private(set) var printed = 0
    private(set) var accepted = 0
    private(set) var rejected = 0
    private(set) var failed = 0

    init(tokens: [String], json: Bool, label: String) {
        self.tokens = tokens
        self.json = json
        self.label = label
    }

    mutating func print(_ r: push_result) {
        printed += 1
        let token = Int(r.tag) < tokens.count ? tokens[Int(r.tag)] : "?"
        let outcome: String
        switch UInt32(bitPattern: r.outcome) {
        case PUSH_OUTCOME_ACCEPTED.rawValue: outcome = "ACCEPTED"; accepted += 1
        case PUSH_OUTCOME_REJECTED.rawValue: outcome = "REJECTED"; rejected += 1
        default: outcome = "FAILED"; failed += 1
        }
        let reasonCode = APNsReason(rawValue: r.reason) ?? .unknown
        let detail = cString(r.reason_text)
        let reason = reasonCode == .unknown && !detail.isEmpty ? detail : reasonCode.text
        let apnsID = cString(r.apns_id)
        if json {
            var line = "{\"\(label)\":\(jsonQuoted(token)),\"outcome\":\"\(outcome)\",\"status\":\(r.status),\"reason\":\(jsonQuoted(reason))"
            line += ",\"apns_id\":\(jsonQuoted(apnsID))"
            let uniqueID = cString(r.unique_id)
            if !uniqueID.isEmpty { line += ",\"unique_id\":\(jsonQuoted(uniqueID))" }
            if r.timestamp_ms != 0 { line += ",\"timestamp_ms\":\(r.timestamp_ms)" }
            if !detail.isEmpty && detail != reason { line += ",\"detail\":\(jsonQuoted(detail))" }
            line += ",\"attempts\":\(r.attempts),\"latency_us\":\(r.latency_us)}"
            Console.out(line)
        } else {
            var line = "\(token) \(outcome) \(r.status) \(reason.isEmpty ? "-" : reason) apns-id=\(apnsID.isEmpty ? "-" : apnsID)"
            if !detail.isEmpty && detail != reason { line += " (\(detail))" }
            Console.out(line)
        }
    }

    /// A notification the client refused at send (it gets no result).
    mutating func refused(token: String, error: ClientError) {
        printed += 1
        failed += 1
        if json {
            Console.out("{\"\(label)\":\(jsonQuoted(token)),\"outcome\":\"FAILED\",\"status\":0,\"reason\":\"\",\"apns_id\":\"\",\"detail\":\(jsonQuoted(error.description))}")
        } else {
            Console.out("\(token) FAILED 0 - apns-id=- (\(error.description))")
        }
    }

    func summary() {
        let total = accepted + rejected + failed
        if json {
            Console.out("{\"summary\":{\"total\":\(total),\"accepted\":\(accepted),\"rejected\":\(rejected),\"failed\":\(failed)}}")
        } else {
            Console.out("\(total) notification\(total == 1 ? "" : "s"): \(accepted) accepted, \(rejected) rejected, \(failed) failed")
        }
    }

    private func cString<T>(_ tuple: T) -> String {
        withUnsafeBytes(of: tuple) { raw in
            let n = raw.firstIndex(of: 0) ?? raw.count
            return String(decoding: raw.prefix(n), as: UTF8.self)
        }
    }
}

/// Bytes copied into memory that stays put (a push_notification points at it until send
/// returns), NUL-terminated so that an empty value is an empty C string.
private final class CBytes {
    let pointer: UnsafeMutablePointer<CChar>
    let count: Int

    init(_ bytes: [UInt8]) {
        count = bytes.count
        pointer = .allocate(capacity: bytes.count + 1)
        bytes.withUnsafeBytes { UnsafeMutableRawPointer(pointer).copyMemory(from: $0.baseAddress ?? UnsafeRawPointer(pointer), byteCount: $0.count) }
        pointer[bytes.count] = 0
    }

    deinit { pointer.deallocate() }

    /// As a (pointer, length) field pair.
    var argument: (UnsafePointer<CChar>?, Int) { (UnsafePointer(pointer), count) }
}

private extension Substring {
    /// Without leading and trailing spaces and tabs.
    var trimmingSpaces: String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(self[first...last])
    }
}
