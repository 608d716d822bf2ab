#if canImport(Glibc)
import Glibc
#endif
import CSwiftPushABI
import PushCore
import PushTransport

/// `swiftpush send`: sends one notification to one or more device tokens and prints one line
/// per outcome, then a summary. Exit status: 0 when every notification was accepted, 1 when
/// any was rejected or failed (or no connection could be made), 2 for usage errors (including
/// unreadable files, invalid tokens and payloads: nothing is sent then).
enum SendCommand {
    static let subcommand = Subcommand(
        name: "send",
        summary: "Send a notification to one or more device tokens.",
        options: [
            OptionSpec("token", value: "HEX", repeatable: true, help: "a device token"),
            OptionSpec("tokens-file", value: "FILE", help: "device tokens, one per line ('#' comments, blank lines skipped)"),
            OptionSpec("channel", value: "ID", help: "broadcast to this channel instead (iOS 18 Live Activities; --topic is the bundle id)"),
        ] + ConnectionOptions.specs + [
            OptionSpec("topic", value: "TOPIC", help: "apns-topic (default: from --apns-file's bundle id)"),
            OptionSpec("push-type", value: "TYPE", help: "alert (default), background, voip, liveactivity, ..."),
            OptionSpec("priority", value: "N", help: "10, 5 or 1 (default: the push type's, 5 for background)"),
            OptionSpec("expiration", value: "SECONDS", help: "apns-expiration: UNIX seconds, or 0 to try once"),
            OptionSpec("collapse-id", value: "ID", help: "apns-collapse-id (at most 64 bytes)"),
            OptionSpec("apns-id", value: "UUID", help: "apns-id (one token only; default: generated)"),
            OptionSpec("payload", value: "FILE", help: "the JSON payload, sent as it is ('-': standard input)"),
            OptionSpec("apns-file", value: "FILE", help: "a .apns file: payload plus \"Simulator Target Bundle\""),
            OptionSpec("title", value: "TEXT", help: "payload from flags: aps.alert.title"),
            OptionSpec("subtitle", value: "TEXT", help: "aps.alert.subtitle"),
            OptionSpec("body", value: "TEXT", help: "aps.alert.body"),
            OptionSpec("badge", value: "N", help: "aps.badge (0 clears it)"),
            OptionSpec("sound", value: "NAME", help: "aps.sound (e.g. default)"),
            OptionSpec("thread-id", value: "ID", help: "aps.thread-id"),
            OptionSpec("category", value: "NAME", help: "aps.category"),
            OptionSpec("content-available", value: nil, help: "aps.content-available: 1"),
            OptionSpec("mutable-content", value: nil, help: "aps.mutable-content: 1"),
            OptionSpec("custom", value: "KEY=JSON", repeatable: true, help: "a custom top-level key with a JSON value"),
            OptionSpec("timeout", value: "SECONDS", help: "how long to wait for a connection and each outcome (default 30)"),
            OptionSpec("json", value: nil, help: "print one JSON object per line instead of text"),
            OptionSpec("verbose", value: nil, help: "(-v) print the library's log events (connections, back-off, tokens) to standard error"),
            OptionSpec("debug", value: nil, help: "with --verbose: also DEBUG events (each connection attempt)"),
        ],
        notes: """
        Prints one line per notification: TOKEN ACCEPTED|REJECTED|FAILED STATUS REASON apns-id=ID
        (FAILED: no answer from APNs; the reason says why), then a summary line.
        Exit status: 0 all accepted, 1 something rejected or failed, 2 usage error.
        Background notifications need --push-type background (and --content-available).
        A broadcast (--channel ID, from 'swiftpush channels create') goes to every device subscribed
        to the channel: --topic names the app's bundle id, the push type is liveactivity, and
        --expiration defaults to 0 (what a channel storing no message requires).
        example: swiftpush send --key AuthKey_ABC123DEFG.p8 --key-id ABC123DEFG --team-id TEAM123456 \\
                   --topic com.example.app --token 00fc13ad... --title Hello --body 'from swiftpush'
        """,
        run: run)

    static func run(_ args: ParsedArguments) throws(UsageError) -> Int32 {
        let request = try SendRequest(args)
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

    init(_ args: ParsedArguments) throws(UsageError) {
        json = args.has("json")
        if args.has("verbose") {
            // The library's log events, one line each on stderr: "swiftpush: LEVEL event: message".
            let level = args.has("debug") ? LogLevel.debug : LogLevel.info
            configuration.logCallback = LogCallback(function: { _, level, event, message in
                let name = LogLevel(rawValue: level).map { "\($0)".uppercased() } ?? "\(level)"
                Console.err("swiftpush: \(name) \(String(cString: event!)): \(String(cString: message!))")
            }, userData: nil, minLevel: level.rawValue)
        }
        // Seconds, within the deadline option's range (it becomes the deadline).
        timeoutMillis = Int32(try args.integer("timeout", default: 30, in: 1...PushOption.deadlineMs.intRange.upperBound / 1000) * 1000)
        try readDestination(args)
        if let id = args.value("channel") {
            if let v = Array(id.utf8).withUnsafeBytes({ BroadcastRules.checkChannelId($0) }) { throw UsageError("--channel: \(v.message)") }
            channel = id
            pushType = BroadcastRules.pushType // a broadcast's only push type; --push-type may say it again
            expiration = 0 // required on a broadcast: try once unless --expiration says otherwise
        }
        try readHeaders(args)
        let bundleID = try readPayload(args)
        try readTopic(args, bundleID: bundleID)
        try readTokens(args)
        if apnsID != nil && tokens.count > 1 {
            throw UsageError("--apns-id names one notification: give a single device token with it")
        }
    }

    private mutating func readDestination(_ args: ParsedArguments) throws(UsageError) {
        try ConnectionOptions.apply(args, to: &configuration)
        configuration.deadlineMillis = Int(timeoutMillis)
        configuration.connectTimeoutMillis = min(Int(timeoutMillis), PushOption.connectTimeoutMs.defaultInt)
    }

    private mutating func readHeaders(_ args: ParsedArguments) throws(UsageError) {
        if let name = args.value("push-type") {
            guard let type = PushType(headerValue: name) else {
                let names = PushType.allCases.map { "\($0.headerValue)" }.joined(separator: ", ")
                throw UsageError("--push-type must be one of \(names); got '\(name)'")
            }
            if channel != nil && type != BroadcastRules.pushType { throw UsageError("--channel broadcasts are --push-type liveactivity") }
            pushType = type
        }
        if let text = args.value("priority") {
            guard let p = Int32(text) else { throw UsageError("--priority needs 10, 5 or 1, got '\(text)'") }
            if case .failure(let v) = NotificationRules.resolvePriority(p, pushType: pushType) { throw UsageError(v.message) }
            priority = p
        }
        if let text = args.value("expiration") {
            guard let seconds = Int64(text), NotificationRules.checkExpiration(seconds) == nil else {
                throw UsageError("--expiration needs UNIX seconds or 0, got '\(text)'")
            }
            expiration = seconds
        }
        if let id = args.value("collapse-id") {
            let bytes = Array(id.utf8)
            if let v = bytes.withUnsafeBytes({ NotificationRules.checkCollapseId($0) }) { throw UsageError(v.message) }
            collapseID = bytes
        }
        if let id = args.value("apns-id") {
            let bytes = Array(id.lowercased().utf8)
            if let v = bytes.withUnsafeBytes({ NotificationRules.checkApnsId($0) }) { throw UsageError(v.message) }
            apnsID = bytes
        }
    }

    /// The payload from exactly one source; returns the .apns file's bundle id, if any.
    private mutating func readPayload(_ args: ParsedArguments) throws(UsageError) -> String? {
        let flagNames = ["title", "subtitle", "body", "badge", "sound", "thread-id", "category", "custom"]
        let fromFlags = flagNames.contains { args.value($0) != nil } || args.has("content-available") || args.has("mutable-content")
        let sources = [args.value("payload") != nil, args.value("apns-file") != nil, fromFlags].filter { $0 }.count
        if sources == 0 { throw UsageError("no payload: give --payload FILE, --apns-file FILE or --title/--body/... flags") }
        if sources > 1 { throw UsageError("give one payload source: --payload, --apns-file or the payload flags") }
        var bundleID: String?
        if let path = args.value("payload") {
            payload = path == "-" ? try readFile("/dev/stdin", what: "standard input", limit: 1 << 20)
                                  : try readFile(path, what: "payload file", limit: 1 << 20)
        } else if let path = args.value("apns-file") {
            let contents = try readFile(path, what: ".apns file", limit: 1 << 20)
            do throws(ApnsFile.Failure) {
                let file = try ApnsFile(contents: contents)
                payload = file.payload
                bundleID = file.bundleID
            } catch {
                throw UsageError(".apns file \(path): \(error.message)")
            }
        } else {
            payload = try buildPayload(args)
        }
        let violation = payload.withUnsafeBytes {
            channel == nil ? NotificationRules.checkPayload($0, pushType: pushType) : BroadcastRules.checkPayload($0)
        }
        if let violation { throw UsageError(violation.message) }
        return bundleID
    }

    private func buildPayload(_ args: ParsedArguments) throws(UsageError) -> [UInt8] {
        var b = PayloadBuilder()
        b.title = args.value("title")
        b.subtitle = args.value("subtitle")
        b.body = args.value("body")
        if args.value("badge") != nil { b.badge = try args.integer("badge", default: 0, in: 0...Int(Int32.max)) }
        b.sound = args.value("sound").map { .named($0) }
        b.threadID = args.value("thread-id")
        b.category = args.value("category")
        b.contentAvailable = args.has("content-available")
        b.mutableContent = args.has("mutable-content")
        do throws(PayloadBuilder.Failure) {
            for item in args.all("custom") {
                guard let eq = item.firstIndex(of: "=") else { throw PayloadBuilder.Failure(.badPayload, "--custom needs KEY=JSON, got '\(item)'") }
                try b.addCustom(key: String(item[..<eq]), json: Array(item[item.index(after: eq)...].utf8))
            }
            return channel == nil ? try b.build(for: pushType) : try b.build(limit: BroadcastRules.maxPayloadBytes)
        } catch {
            throw UsageError(error.message)
        }
    }

    private mutating func readTopic(_ args: ParsedArguments, bundleID: String?) throws(UsageError) {
        if let t = args.value("topic") {
            topic = Array(t.utf8)
        } else if let bundleID {
            switch Array(bundleID.utf8).withUnsafeBytes({ pushType.topic(forBundleID: $0) }) {
            case .success(let t): topic = Array(t.utf8)
            case .failure(let v): throw UsageError("topic from the .apns file's bundle id: \(v.message)")
            }
        } else {
            throw UsageError("missing --topic (the app's bundle id, plus the push type's suffix)")
        }
        let violation = topic.withUnsafeBytes {
            channel == nil ? NotificationRules.checkTopic($0, pushType: pushType) : BroadcastRules.checkBundleId($0)
        }
        if let violation { throw UsageError(violation.message) }
    }

    private mutating func readTokens(_ args: ParsedArguments) throws(UsageError) {
        if let channel {
            if !args.all("token").isEmpty || args.value("tokens-file") != nil {
                throw UsageError("--channel broadcasts to a channel: no --token or --tokens-file with it")
            }
            tokens = [channel]
            return
        }
        tokens = args.all("token")
        if let path = args.value("tokens-file") {
            let text = String(decoding: try readFile(path, what: "tokens file", limit: 64 << 20), as: UTF8.self)
            for line in text.split(whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
                let token = line.trimmingSpaces
                if token.isEmpty || token.hasPrefix("#") { continue }
                tokens.append(token)
            }
        }
        if tokens.isEmpty { throw UsageError("no device token: give --token HEX or --tokens-file FILE") }
        for token in tokens {
            if let v = Array(token.utf8).withUnsafeBytes({ NotificationRules.checkDeviceToken($0) }) {
                throw UsageError("invalid device token '\(token)': \(v.message)")
            }
        }
    }

    private func readFile(_ path: String, what: String, limit: Int) throws(UsageError) -> [UInt8] {
        do throws(FileBytes.ReadError) {
            return try FileBytes.read(path: path, limit: limit)
        } catch {
            throw UsageError("cannot read \(what) \(path == "/dev/stdin" ? "" : path): \(error.description)")
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
        if let e = client.waitUntilConnected(timeoutMillis: Int32(configuration.connectTimeoutMillis)) {
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
