#if canImport(Glibc)
import Glibc
#endif
import PushCore
import PushTransport

/// Performing what a connection's `ConnectionState` decided: the state says what becomes of the
/// connection, the client does it here (pool moves, closes, PINGs, the log). On the I/O thread.
extension PushClient {
    /// Performs `action`, decided by `conn.state` just before.
    func perform(_ action: ConnectionState.Action, on conn: APNsConnection) {
        switch action {
        case .none:
            return
        case .replace, .close:
            // Out of the pool (it takes no new streams), so that its position reconnects (at
            // once, unless the client is backing off).
            if pool.connections[conn.poolIndex] === conn {
                if conn.state.history.retiredByClient {
                    log(.info, .retired, "connection to \(configuration.endpoint.host):\(configuration.endpoint.port) retired (pool position \(conn.poolIndex)): it takes no new notifications")
                }
                pool.connections[conn.poolIndex] = nil
                pool.retiring.append(conn)
            }
            if action == .close { conn.requestClose(nil) }
        case .ping:
            conn.sendPing()
        case .fail(let failure):
            conn.close(error(for: failure))
        }
    }

    /// The client stops using `conn` (the pool shrinks, its stream ids ran out): it takes no
    /// new streams, drains, and its end is not reported as a connection error.
    func retireByClient(_ conn: APNsConnection) {
        perform(conn.state.retire(), on: conn)
    }

    /// Health: an idle connection gets a PING; one whose PING goes unanswered is closed (its
    /// streams end as connection lost, its position reconnects). `ConnectionState.checkHealth`
    /// decides.
    func checkHealth(now: UInt64) {
        let timers = self.timers
        guard timers.idlePingNanos > 0 else { return }
        for conn in pool.connections.compactMap({ $0 }) + pool.retiring {
            perform(conn.state.checkHealth(now: now, lastInputNanos: conn.lastInputNanos, timers: timers), on: conn)
        }
    }

    /// The error a connection given up on by a timer ends with.
    private func error(for failure: ConnectionState.Failure) -> TransportError {
        switch failure {
        case .connectTimedOut:
            return TransportError(.connect, "connecting to \(configuration.endpoint.host):\(configuration.endpoint.port) timed out")
        case .settingsTimedOut:
            return TransportError(.protocolError, "the server sent no HTTP/2 SETTINGS within \(configuration.timing.connectTimeoutMillis) ms of the TLS handshake")
        case .pingUnanswered:
            return TransportError(.closed, "no PING acknowledgement within \(configuration.timing.pingTimeoutMillis) ms")
        }
    }
}
