#if canImport(Glibc)
import Glibc
#endif
import CSwiftPushABI
import PushCore
import PushTransport

/// Severity of a log event (`PUSH_LOG_*`; Python logging's values).
public enum LogLevel: Int32, Sendable, Comparable {
    case debug = 10, info = 20, warning = 30, error = 40

    public static func < (a: LogLevel, b: LogLevel) -> Bool { a.rawValue < b.rawValue }
}

/// A C function that receives log events, with the caller's pointer and the lowest level wanted.
public struct LogCallback: @unchecked Sendable {
    /// The function (`push_log_callback`).
    public let function: push_log_callback
    /// Passed back as the first argument; the caller keeps what it points to alive.
    public let userData: UnsafeMutableRawPointer?
    /// Events below this level are not built or reported.
    public let minLevel: Int32

    public init(function: push_log_callback, userData: UnsafeMutableRawPointer?, minLevel: Int32) {
        self.function = function
        self.userData = userData
        self.minLevel = minLevel
    }
}

/// Log events: what the I/O thread tells a log callback (silent without one). Messages never
/// hold key material, provider tokens, device tokens or payloads: hosts, ports, counts, delays
/// and error texts only (the error texts never quote secrets either).
extension PushClient {
    /// The event names, stable across versions (documented at push_config_set_log_callback).
    enum LogEvent: String {
        case connecting = "connection.connecting"
        case ready = "connection.ready"
        case closed = "connection.closed"
        case retired = "connection.retired"
        case poolResized = "pool.resized"
        case reconnectScheduled = "reconnect.scheduled"
        case tokenSigned = "token.signed"
        case tlsFailure = "tls.failure"
        case protocolError = "protocol.error"
        case slowCallback = "callback.slow"
    }

    /// A result callback that takes longer than this is reported (`callback.slow`).
    static let slowCallbackNanos: UInt64 = 100_000_000

    /// Reports an event; `message` is built only when someone listens at `level`.
    func log(_ level: LogLevel, _ event: LogEvent, _ message: @autoclosure () -> String) {
        guard let sink = configuration.callbacks.log, level.rawValue >= sink.minLevel else { return }
        let text = message()
        event.rawValue.withCString { e in
            text.withCString { m in sink.function(sink.userData, level.rawValue, e, m) }
        }
    }

    /// Logs a failed connection attempt: the error (as a TLS failure or protocol error when it
    /// is one) and the back-off it caused.
    func logAttemptFailed(_ error: TransportError, delayNanos: UInt64?) {
        switch error.kind {
        case .tls: log(.error, .tlsFailure, error.description)
        case .protocolError: log(.error, .protocolError, error.description)
        default: break
        }
        if let delayNanos {
            log(.warning, .reconnectScheduled,
                "\(error.description); next connection attempt in \(delayNanos / 1_000_000) ms")
        }
    }
}
