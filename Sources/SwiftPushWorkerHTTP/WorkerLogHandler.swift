import Logging
import SwiftPushWorker

/// The HTTP server's own log lines (Hummingbird's, at error level) in the worker's one format
/// (`WorkerLog`: logfmt, RFC 3339 UTC times), so that the worker's standard error holds no line
/// of another shape (swift-log's `StreamLogHandler` writes `2026-11-28T21:02:23+0000 error
/// label: ...`). The logger's name and metadata become fields.
struct WorkerLogHandler: LogHandler {
    /// Where the lines go.
    let sink: WorkerLog
    var logLevel: Logger.Level = .error
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var fields = ["logger": "swiftpush.http"]
        for (key, value) in metadata.merging(event.metadata ?? [:], uniquingKeysWith: { $1 }) { fields[key] = "\(value)" }
        switch event.level {
        case .trace, .debug, .info, .notice: sink.info("\(event.message)", fields)
        case .warning: sink.warning("\(event.message)", fields)
        case .error, .critical: sink.error("\(event.message)", fields)
        }
    }
}
