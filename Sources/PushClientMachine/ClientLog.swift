#if canImport(Glibc)
import Glibc
#endif
import CSwiftPushABI
import PushCore

/// Severity of a log event (`PUSH_LOG_*`; Python logging's values).
public enum LogLevel: Int32, Sendable, Comparable {
    case debug = 10, info = 20, warning = 30, error = 40

    public static func < (a: LogLevel, b: LogLevel) -> Bool { a.rawValue < b.rawValue }
}

/// Where a client's log events go, with the lowest level wanted: a Swift closure, called on
/// the I/O thread (with several I/O threads, from any of them, possibly at once) with the
/// level, the event's stable name and the message. The Swift API feeds its `Logger` from it;
/// the C ABI's `push_log_callback` is mapped onto it (`init(function:userData:minLevel:)`).
public struct LogCallback: Sendable {
    /// Receives (level, event name, message).
    public let emit: @Sendable (LogLevel, String, String) -> Void
    /// Events below this level (a `LogLevel` raw value) are not built or reported.
    public let minLevel: Int32

    /// Events of `minLevel` and above go to `emit`.
    public init(minLevel: LogLevel, emit: @escaping @Sendable (LogLevel, String, String) -> Void) {
        self.emit = emit
        self.minLevel = minLevel.rawValue
    }

    /// Events of `minLevel` and above go to a C function (`push_log_callback`) with the
    /// caller's pointer, as NUL-terminated strings valid during the call.
    public init(function: push_log_callback, userData: UnsafeMutableRawPointer?, minLevel: Int32) {
        let target = CLogTarget(function: function, userData: userData)
        self.minLevel = minLevel
        emit = { level, event, message in
            event.withCString { e in message.withCString { m in target.function(target.userData, level.rawValue, e, m) } }
        }
    }
}

/// A C log function and its user data (the caller keeps what it points to alive and usable
/// from the I/O threads: the C ABI's contract).
private struct CLogTarget: @unchecked Sendable {
    package let function: push_log_callback
    package let userData: UnsafeMutableRawPointer?
}

/// The client's log events: a log callback (silent without one) and the events' stable names.
/// Messages never hold key material, provider tokens, device tokens or payloads: hosts, ports,
/// counts, delays and error texts only (the error texts never quote secrets either). Held by
/// `PushClient` and by its `ClientCore`, which log from the I/O thread.
package struct ClientLog {
    /// Where events go (nil: nowhere).
    package let callback: LogCallback?

    /// Events go to `callback` (nil: nowhere).
    package init(callback: LogCallback?) { self.callback = callback }

    /// The event names, stable across versions (documented at push_config_set_log_callback).
    package enum Event: String {
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
        case unreachable = "connection.unreachable"
        case reachable = "connection.reachable"
    }

    /// Reports an event; `message` is built only when someone listens at `level`.
    package func callAsFunction(_ level: LogLevel, _ event: Event, _ message: @autoclosure () -> String) {
        guard let sink = callback, level.rawValue >= sink.minLevel else { return }
        sink.emit(level, event.rawValue, message())
    }
}
