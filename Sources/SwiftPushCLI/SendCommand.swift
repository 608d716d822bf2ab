#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import Logging
import PushCore
import PushClientCore
import PushTransport
import SwiftPushKit

/// `swiftpush send`: sends one notification to one or more device tokens and prints one line
/// per outcome, then a summary. Exit status: 0 when every notification was accepted, 1 when
/// any was rejected or failed (or no connection could be made), 2 for usage errors (including
/// unreadable files, invalid tokens on the command line and payloads: nothing is sent then),
/// 3 when lines of `--tokens-file` were not device tokens (each reported INVALID with its line
/// number; the others were sent and accepted). `--strict` makes such a line a usage error.
struct SendCommand: StatusCommand {
    static let configuration = CommandConfiguration(
        commandName: "send",
        abstract: "Send a notification to one or more device tokens.",
        usage: "swiftpush send [options]",
        discussion: """
        Prints one line per notification:
          TOKEN ACCEPTED|REJECTED|FAILED STATUS REASON apns-id=ID
        (FAILED: no answer from APNs; the reason says why), then a summary line.
        A line of --tokens-file that is not a device token is reported as
          TOKEN INVALID 0 BadDeviceToken line=N (why)
        and the other lines are sent (--strict: nothing is sent, exit 2).
        Exit status: 0 all accepted, 1 something rejected or failed, 2 usage error,
        3 all sent were accepted but lines of --tokens-file were invalid.
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
    @Option(help: ArgumentHelp("device tokens, one per line ('#' comments, blank lines skipped)", valueName: "FILE"), completion: .file())
    var tokensFile: String?
    @Flag(help: "a bad line in --tokens-file stops the run before anything is sent (default: reported as INVALID, the rest sent)")
    var strict = false
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
    @Option(help: ArgumentHelp("the JSON payload, sent as it is ('-': standard input)", valueName: "FILE"), completion: .file())
    var payload: String?
    @Option(help: ArgumentHelp("a .apns file: payload plus \"Simulator Target Bundle\"", valueName: "FILE"), completion: .file())
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
    // .unconditional: `--timeout -1` is a value (refused by validate, "must be positive"), not an
    // unknown option -1 that would leave --timeout "missing" its value.
    @Option(parsing: .unconditional, help: ArgumentHelp("how long to wait for a connection and each outcome (default 30)", valueName: "SECONDS"))
    var timeout: Int?
    @Flag(help: "print one JSON object per line instead of text")
    var json = false
    @Flag(name: [.customLong("verbose"), .customShort("v")],
          help: "print the library's log events (connections, back-off, tokens) to standard error")
    var verbose = false
    @Flag(help: "with --verbose: also DEBUG events (each connection attempt)")
    var debug = false
    @Flag(help: "no progress line on standard error (shown on a terminal for more than \(ProgressLine.defaultThreshold) notifications)")
    var quiet = false

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
        return try request.deliver()
    }
}

/// Everything `send` needs, checked before any connection is made.
private struct SendRequest {
    var configuration: APNsConfiguration
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
    var quiet = false
    /// The library's log events on stderr with --verbose ("swiftpush: LEVEL event: message").
    var logger: Logger
    /// A broadcast's channel id (`--channel`): then `tokens` holds it alone, as the outcome's label.
    var channel: String?
    /// Lines of `--tokens-file` that are not device tokens (without `--strict`): reported, not sent.
    var invalidLines: [InvalidLine] = []

    init(_ args: SendCommand) throws(ValidationError) {
        json = args.json
        quiet = args.quiet
        logger = StderrEventLogHandler.logger(verbose: args.verbose, debug: args.debug)
        timeoutMillis = Int32((args.timeout ?? 30) * 1000)
        configuration = try args.connection.configuration()
        configuration.timing.deadline = .milliseconds(timeoutMillis)
        configuration.timing.connectTimeout = .milliseconds(min(Int(timeoutMillis), PushOption.connectTimeoutMs.defaultInt))
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
        for token in tokens {
            if let v = Array(token.utf8).withUnsafeBytes({ NotificationRules.checkDeviceToken($0) }) {
                throw ValidationError("invalid device token '\(token)': \(v.message)")
            }
        }
        if let path = args.tokensFile {
            let text = String(decoding: try readFile(path, what: "tokens file", limit: 64 << 20), as: UTF8.self)
            // Every line counted (blank ones too), so that a reported number is the editor's.
            let lines = text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" })
            for (index, line) in lines.enumerated() {
                let token = line.trimmingSpaces
                if token.isEmpty || token.hasPrefix("#") { continue }
                if let v = Array(token.utf8).withUnsafeBytes({ NotificationRules.checkDeviceToken($0) }) {
                    if args.strict { throw ValidationError("invalid device token '\(token)' on line \(index + 1) of \(path): \(v.message)") }
                    invalidLines.append(InvalidLine(number: index + 1, text: token, reason: v.message))
                    continue
                }
                tokens.append(token)
            }
        }
        if tokens.isEmpty && invalidLines.isEmpty { throw ValidationError("no device token: give --token HEX or --tokens-file FILE") }
    }

    private func readFile(_ path: String, what: String, limit: Int) throws(ValidationError) -> [UInt8] {
        do throws(FileBytes.ReadError) {
            return try FileBytes.read(path: path, limit: limit)
        } catch {
            throw ValidationError("cannot read \(what) \(path == "/dev/stdin" ? "" : path): \(error.description)")
        }
    }

    // MARK: - Sending

    /// The notification to `token` (a broadcast's channel id) with the request's headers and
    /// payload (shared, not copied, by every notification).
    func notification(to token: String, payload shared: PushPayload) -> PushNotification {
        // Every value was checked above by the rules the send applies again.
        PushNotification(destination: channel == nil ? .device(token: token) : .channel(id: token), payload: shared,
                         pushType: APNsPushType(headerValue: "\(pushType.headerValue)")!,
                         topic: String(decoding: topic, as: UTF8.self), priority: priority == 0 ? nil : PushPriority(rawValue: Int(priority)),
                         expiration: expiration.map(PushExpiration.init(unixSeconds:)),
                         collapseID: collapseID.map { String(decoding: $0, as: UTF8.self) },
                         apnsID: apnsID.flatMap { APNsID(String(decoding: $0, as: UTF8.self)) })
    }

    /// Connects, sends to every token, prints every outcome as it arrives and a summary; the
    /// invalid lines of the tokens file first, each as its own INVALID line.
    func deliver() throws(ValidationError) -> Int32 {
        var printer = OutcomePrinter(tokens: tokens, json: json, label: channel == nil ? "token" : "channel", quiet: quiet)
        for line in invalidLines { printer.invalid(line) }
        if tokens.isEmpty {
            printer.summary()
            return 3
        }
        let engine: APNsEngine
        do throws(PushError) {
            engine = try APNsEngine(configuration: configuration, logger: logger)
        } catch {
            // A key or option the client refused when it opened (a .p12's password): a usage error.
            if error.code == .badOption || error.code == .key { throw ValidationError(error.message) }
            Console.err("swiftpush send: \(error.message)")
            return 1
        }
        do throws(PushError) {
            try engine.waitUntilConnected(timeout: configuration.timing.connectTimeout)
        } catch {
            Console.err("swiftpush send: \(error.message)")
            engine.close(drain: .zero)
            return 1
        }
        let shared = PushPayload(json: payload)
        var results: [TaggedResult] = []
        results.reserveCapacity(1024)
        var sent = 0

        /// Prints the results that came; false once every result was taken.
        func drain(wait: Duration) -> Bool {
            let take = engine.take(into: &results, max: 1024, timeout: wait)
            for r in results { printer.print(r) }
            results.removeAll(keepingCapacity: true)
            return take != .finished
        }

        // In chunks, so that a million tokens are not a million notifications at once.
        var batch: [TaggedNotification] = []
        var next = 0
        while next < tokens.count {
            let end = min(next + 512, tokens.count)
            batch.removeAll(keepingCapacity: true)
            for i in next..<end { batch.append(TaggedNotification(tag: UInt64(i), notification: notification(to: tokens[i], payload: shared))) }
            var rest = batch[...]
            while !rest.isEmpty {
                let submission = engine.submit(rest)
                sent += submission.accepted
                rest = rest.dropFirst(submission.accepted)
                guard let error = submission.error else { break }
                if error.code == .queueFull, drain(wait: .milliseconds(100)) { continue }
                // Checked before connecting, so only a closing client gets here.
                printer.refused(token: tokens[Int(rest.first!.tag)], error: error)
                rest = rest.dropFirst()
            }
            _ = drain(wait: .zero)
            next = end
        }
        while printer.printed < tokens.count, drain(wait: .seconds(1)) {}
        engine.close(drain: .zero)
        while printer.printed < tokens.count, drain(wait: .zero) {}
        printer.summary()
        if printer.accepted != tokens.count { return 1 }
        return invalidLines.isEmpty ? 0 : 3
    }
}

/// A line of `--tokens-file` that is not a device token.
private struct InvalidLine {
    /// Its number in the file, from 1.
    let number: Int
    /// What it holds (spaces trimmed).
    let text: String
    /// Why it is not a token (`NotificationRules.checkDeviceToken`'s message).
    let reason: String
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
    private(set) var invalidCount = 0
    /// A progress line on a terminal's stderr for many tokens.
    private var progress: ProgressLine

    init(tokens: [String], json: Bool, label: String, quiet: Bool) {
        self.tokens = tokens
        self.json = json
        self.label = label
        progress = ProgressLine(total: tokens.count, quiet: quiet)
    }

    mutating func print(_ tagged: TaggedResult) {
        let r = tagged.result
        let token = Int(tagged.tag) < tokens.count ? tokens[Int(tagged.tag)] : "?"
        let outcome: String
        switch r.outcome {
        case .accepted: outcome = "ACCEPTED"; accepted += 1
        case .rejected: outcome = "REJECTED"; rejected += 1
        case .failed: outcome = "FAILED"; failed += 1
        }
        let detail = r.detail
        // An unknown reason keeps APNs's text, which is the detail.
        let reason = r.reason?.text ?? ""
        let apnsID = r.apnsID.description
        if json {
            var line = "{\"\(label)\":\(jsonQuoted(token)),\"outcome\":\"\(outcome)\",\"status\":\(r.status),\"reason\":\(jsonQuoted(reason))"
            line += ",\"apns_id\":\(jsonQuoted(apnsID))"
            if let uniqueID = r.uniqueID { line += ",\"unique_id\":\(jsonQuoted(uniqueID.description))" }
            if let timestamp = r.timestamp { line += ",\"timestamp_ms\":\(timestamp)" }
            if !detail.isEmpty && detail != reason { line += ",\"detail\":\(jsonQuoted(detail))" }
            line += ",\"attempts\":\(r.attempts),\"latency_us\":\(Int64(r.latency / .microseconds(1)))}"
            emit(line)
        } else {
            var line = "\(token) \(outcome) \(r.status) \(reason.isEmpty ? "-" : reason) apns-id=\(apnsID.isEmpty ? "-" : apnsID)"
            if !detail.isEmpty && detail != reason { line += " (\(detail))" }
            emit(line)
        }
    }

    /// A notification the client refused at send (it gets no result).
    mutating func refused(token: String, error: PushError) {
        failed += 1
        if json {
            emit("{\"\(label)\":\(jsonQuoted(token)),\"outcome\":\"FAILED\",\"status\":0,\"reason\":\"\",\"apns_id\":\"\",\"detail\":\(jsonQuoted(error.message))}")
        } else {
            emit("\(token) FAILED 0 - apns-id=- (\(error.message))")
        }
    }

    /// An input line that is not a device token: INVALID, never sent, not counted as printed
    /// (`printed` counts the outcomes of what is sent).
    mutating func invalid(_ line: InvalidLine) {
        invalidCount += 1
        progress.willPrint()
        if json {
            Console.out("{\"\(label)\":\(jsonQuoted(line.text)),\"outcome\":\"INVALID\",\"status\":0,\"reason\":\"BadDeviceToken\",\"line\":\(line.number),\"detail\":\(jsonQuoted(line.reason))}")
        } else {
            Console.out("\(line.text) INVALID 0 BadDeviceToken line=\(line.number) (\(line.reason))")
        }
    }

    /// Prints an outcome's line and counts it, keeping the progress line clear of it.
    private mutating func emit(_ line: String) {
        progress.willPrint()
        Console.out(line)
        printed += 1
        progress.update(done: printed)
    }

    mutating func summary() {
        progress.finish(done: printed)
        let total = accepted + rejected + failed
        // The invalid count only when there are some: the summary of a clean run is unchanged.
        if json {
            let invalid = invalidCount > 0 ? ",\"invalid\":\(invalidCount)" : ""
            Console.out("{\"summary\":{\"total\":\(total),\"accepted\":\(accepted),\"rejected\":\(rejected),\"failed\":\(failed)\(invalid)}}")
        } else {
            let invalid = invalidCount > 0 ? ", \(invalidCount) invalid line\(invalidCount == 1 ? "" : "s")" : ""
            Console.out("\(total) notification\(total == 1 ? "" : "s"): \(accepted) accepted, \(rejected) rejected, \(failed) failed\(invalid)")
        }
    }
}

private extension Substring {
    /// Without leading and trailing spaces and tabs.
    var trimmingSpaces: String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(self[first...last])
    }
}
