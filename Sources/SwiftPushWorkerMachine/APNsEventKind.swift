/// A kind of trouble on the way to APNs (`APNsEventLog`): its metric label and its log message.
/// The machine asks for one to be logged and counted (`WorkerAction.apnsEvent`).
public enum APNsEventKind: String, CaseIterable, Sendable {
    case connectionLost = "connection_lost"
    case goaway
    case backOff = "back_off"
    case credentialsRefused = "credentials_refused"
    case tlsFailure = "tls_failure"
    case protocolError = "protocol_error"

    /// The log line's message.
    package var message: String {
        switch self {
        case .connectionLost: return "APNs connection lost"
        case .goaway: return "APNs sent GOAWAY"
        case .backOff: return "backing off before the next APNs connection"
        case .credentialsRefused: return "APNs refused the credentials"
        case .tlsFailure: return "TLS failure with APNs"
        case .protocolError: return "HTTP/2 protocol error with APNs"
        }
    }
}
