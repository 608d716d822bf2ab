import PushCore

/// Carrying out what a connection's `ConnectionState` decided: the state says what becomes of
/// the connection; the core moves it in the pool and asks the driver for the close or the PING.
extension ClientCore {
    /// Performs `action`, decided by the state of the connection in entry `e` just before.
    mutating func perform(_ action: ConnectionState.Action, on e: Int) {
        switch action {
        case .none:
            return
        case .replace, .close:
            // Out of the pool (it takes no new streams), so that its position reconnects (at
            // once, unless the client is backing off).
            if pool.holdsPosition(e) {
                if pool.entries[e].state.history.retiredByClient {
                    log(.info, .retired, "connection to \(endpointText) retired (pool position \(pool.entries[e].position)): it takes no new notifications")
                }
                pool.leavePosition(e)
            }
            if action == .close { act(.close(pool.id(e))) }
        case .ping:
            act(.ping(pool.id(e)))
        case .fail(let failure):
            act(.fail(pool.id(e), error(for: failure)))
        }
    }

    /// Health: an idle connection gets a PING; one whose PING goes unanswered is given up (its
    /// streams end as connection lost, its position reconnects). `ConnectionState.checkHealth`
    /// decides, from the time of the connection's last read.
    mutating func checkHealth(now: UInt64) {
        guard timers.idlePingNanos > 0 else { return }
        for e in pool.liveEntries {
            perform(pool.entries[e].state.checkHealth(now: now, lastInputNanos: pool.entries[e].lastInputNanos, timers: timers), on: e)
        }
    }

    /// The error a connection given up on by a timer ends with.
    private func error(for failure: ConnectionState.Failure) -> TransportError {
        switch failure {
        case .connectTimedOut:
            return TransportError(.connect, "connecting to \(endpointText) timed out")
        case .settingsTimedOut:
            return TransportError(.protocolError, "the server sent no HTTP/2 SETTINGS within \(configuration.timing.connectTimeoutMillis) ms of the TLS handshake")
        case .pingUnanswered:
            return TransportError(.closed, "no PING acknowledgement within \(configuration.timing.pingTimeoutMillis) ms")
        }
    }
}
