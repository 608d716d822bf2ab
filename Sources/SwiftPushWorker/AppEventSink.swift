import CSwiftPushABI
import PushClientCore
import SwiftPushWorkerMachine

/// One app's client's log events, turned into `APNsEventLog` events: the library reports them
/// on its I/O thread through a log callback whose user data is this sink (kept alive by
/// `AppClients` until the clients are closed).
final class AppEventSink: @unchecked Sendable {
    let app: String
    let events: APNsEventLog

    init(app: String, events: APNsEventLog) {
        self.app = app
        self.events = events
    }

    /// The log callback: warnings and errors only (the library builds no message below that).
    var logCallback: LogCallback {
        LogCallback(function: Self.callback, userData: Unmanaged.passUnretained(self).toOpaque(), minLevel: LogLevel.warning.rawValue)
    }

    /// The library's event names (push_config_set_log_callback) and the kind each one is; GOAWAYs
    /// are counted from the client's stats instead (`WorkerDriver`'s `noteClientEvents`), refused
    /// credentials from the results.
    static let kinds: [String: APNsEventLog.Kind] = [
        "connection.closed": .connectionLost, // at WARNING: an abrupt end (ours and orderly ones are INFO)
        "reconnect.scheduled": .backOff,
        "tls.failure": .tlsFailure,
        "protocol.error": .protocolError,
    ]

    private static let callback: push_log_callback = { userData, _, event, message in
        guard let userData, let event else { return }
        let sink = Unmanaged<AppEventSink>.fromOpaque(userData).takeUnretainedValue()
        guard let kind = kinds[String(cString: event)] else { return }
        sink.events.note(kind, app: sink.app, detail: message.map { String(cString: $0) } ?? "")
    }
}
