#if canImport(Glibc)
import Glibc
#endif
import PushClientMachine
import PushCore
import PushTransport

/// Carrying out what the core asks (`ClientCore.Action`) with the sockets, TLS, nghttp2 and the
/// resolver thread, and reporting back what happened. On the I/O thread.
extension PushClient {
    /// Carries out every action the events returned (`actions`), in order, including those that
    /// carrying one out leads the core to decide. `now` is the time of the event that led to them.
    func performActions(now: UInt64) {
        while actionsDone < actions.count {
            let action = actions[actionsDone]
            actionsDone += 1
            perform(action, now: now)
        }
        actions.removeAll(keepingCapacity: true)
        actionsDone = 0
    }

    /// Some action returned by an event waits to be carried out.
    var hasActions: Bool { actionsDone < actions.count }

    /// Carries out one action.
    private func perform(_ action: ClientCore.Action, now: UInt64) {
        switch action {
        case .resolve(let host, let port):
            core.resolutionStarted(ticket: resolverThread.request(host: host, port: port))
        case .connect(let id, let addresses):
            // Skipped when the core dropped it (its probe was refused, `.backoff`).
            if core.holds(id) { startConnection(id, addresses: addresses, now: now) }
        case .startStreams(let id):
            if let conn = connection(id) { startStreams(on: conn, now: now, refill: false) }
        case .cancelStream(let id, let streamID):
            connection(id)?.cancel(streamID: streamID)
        case .flush(let id):
            connection(id)?.flush()
        case .ping(let id):
            connection(id)?.sendPing()
        case .close(let id):
            connection(id)?.requestClose(nil)
        case .fail(let id, let error):
            connection(id)?.close(error)
        case .terminate(let id):
            guard let conn = connection(id) else { return }
            conn.sendGoaway()
            conn.flush()
            conn.close(nil)
        case .tokenAccepted(let generation):
            token?.accepted(generation: generation)
        case .tokenExpired(let id, let generation, let text):
            core.tokenVerdict(token?.expiredRejection(generation: generation) ?? .alreadyReplaced, on: id, text: text, now: now, actions: &actions)
        case .log(let level, let event, let message):
            log(level, event, message)
        case .backoff(let step):
            if !reconnect.apply(step, now: now), case .probeStarted(let id) = step { core.probeRefused(id) }
        }
    }

    /// The connection the core calls `id`, while it is open.
    func connection(_ id: ConnectionID) -> APNsConnection? {
        let i = Int(id.index)
        guard i < connections.count, let conn = connections[i], conn.id == id else { return nil }
        return conn
    }

    /// Starts connection `id`: a non-blocking TCP connect to the first of `addresses` that takes
    /// one (an address whose connect fails at once is skipped), TLS and HTTP/2 following as the
    /// socket becomes ready; the addresses not tried go back to the core, to be tried in turn if
    /// this connect fails.
    private func startConnection(_ id: ConnectionID, addresses: [SocketConnect.Address], now: UInt64) {
        var order = addresses
        do throws(TransportError) {
            let fd = try SocketConnect.startFirst(of: &order)
            let ssl = try tls.clientSSL(fd: fd, host: configuration.endpoint.host)
            let conn = APNsConnection(id: id, events: self, slots: slots, authority: constants.authority, loop: loop,
                                      clock: configuration.timing.clock, fd: fd, ssl: ssl, sessionMemory: configuration.sessionMemory)
            conn.tunnel.request = tunnelRequest
            let i = Int(id.index)
            while connections.count <= i { connections.append(nil) }
            connections[i] = conn
            core.connectStarted(id, fallback: order, now: now, actions: &actions)
        } catch {
            core.connectFailed(id, error: error, now: now, actions: &actions)
        }
    }
}
