#if canImport(Glibc)
import Glibc
#endif
import PushClientMachine
import PushCore
import PushTransport

/// What connections report (`ConnectionEvents`), handed to the core, whose actions follow. On
/// the I/O thread, never inside nghttp2's callbacks.
extension PushClient: ConnectionEvents {
    func connectionProgressed(_ conn: APNsConnection, _ step: ConnectionProgress) {
        core.connectionProgressed(conn.id, step)
    }

    /// Between two chunks of a read: the core takes what the chunk reported (answers end their
    /// streams, at the read's time), then the streams they freed are refilled at once, so the
    /// server gets work while we read on (see `startStreams`).
    func connectionRead(_ conn: APNsConnection) {
        let now = conn.lastInputNanos
        core.absorb(&conn.input, from: conn.id, now: now, actions: &actions)
        if hasActions { performActions(now: now) }
        startStreams(on: conn, now: now, refill: true)
    }

    /// A connection is gone: the core takes what its last read reported, then accounts for what
    /// was still in flight and reopens its position.
    func connectionClosed(_ conn: APNsConnection, error: TransportError?) {
        let now = configuration.timing.clock.monotonicNanos()
        core.absorb(&conn.input, from: conn.id, now: conn.lastInputNanos, actions: &actions)
        core.connectionClosed(conn.id, error: error, now: now, actions: &actions)
        let i = Int(conn.id.index)
        if i < connections.count, connections[i] === conn { connections[i] = nil }
        performActions(now: now)
    }
}
