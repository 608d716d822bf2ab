import Logging

/// `--verbose`: the library's log events, one line each on standard error, as
/// "swiftpush: LEVEL event: message" (the event's stable name is the `swiftpush.event`
/// metadata SwiftPushKit attaches). The Swift API's own messages, which carry no event, are
/// left out: the command prints its own.
struct StderrEventLogHandler: LogHandler {
    var logLevel: Logger.Level
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        guard let name = event.metadata?["swiftpush.event"] else { return }
        Console.err("swiftpush: \(event.level.rawValue.uppercased()) \(name): \(event.message)")
    }

    /// The command's logger: events at `level` and above on standard error, or none.
    static func logger(verbose: Bool, debug: Bool) -> Logger {
        guard verbose else { return Logger(label: "swiftpush", factory: { _ in SwiftLogNoOpLogHandler() }) }
        return Logger(label: "swiftpush", factory: { _ in StderrEventLogHandler(logLevel: debug ? .debug : .info) })
    }
}
