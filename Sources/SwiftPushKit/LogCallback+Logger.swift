import Logging
import PushClientCore

extension LogCallback {
    /// The library's log events (connections, the pool, reconnects, tokens, TLS and protocol
    /// errors; `push_config_set_log_callback` lists them) as `logger`'s messages, at the
    /// matching level, with the event's stable name as metadata (`swiftpush.event`). Events
    /// below the logger's level are not built. The library's messages never hold keys, tokens,
    /// device tokens or payloads.
    static func forwarding(to logger: Logger) -> LogCallback {
        let minimum: LogLevel
        switch logger.logLevel {
        case .trace, .debug: minimum = .debug
        case .info, .notice: minimum = .info
        case .warning: minimum = .warning
        case .error, .critical: minimum = .error
        }
        return LogCallback(minLevel: minimum) { level, event, message in
            let target: Logger.Level
            switch level {
            case .debug: target = .debug
            case .info: target = .info
            case .warning: target = .warning
            case .error: target = .error
            }
            logger.log(level: target, "\(message)", metadata: ["swiftpush.event": "\(event)"])
        }
    }
}
