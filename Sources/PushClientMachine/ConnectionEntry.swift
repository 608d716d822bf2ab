/// One connection as `ClientCore` knows it: its `ConnectionState` (the one machine that decides
/// its fate), its streams in flight, the core's notes on it, and where it sits in the pool. The
/// socket, TLS and nghttp2 session are the client's (`APNsConnection`), under the same
/// `ConnectionID`.
package struct ConnectionEntry {
    /// Which use of the entry this is (`ConnectionID.generation`).
    package var generation: UInt32 = 0
    /// A connection holds the entry (false: it is free).
    package var isLive = false
    /// Its pool position: it holds it (`ConnectionPool.positions`) until it is retired or closes.
    package var position = 0
    /// Its phase and every decision about its fate (stream limits, GOAWAY, retirement, PINGs,
    /// timeouts, how its end counts).
    package var state: ConnectionState
    /// Its streams in flight, linked through their slots.
    package var inFlight = InFlightList()
    /// The core's notes on it.
    package var record = ConnectionRecord()
    /// When input last arrived (the read's time): health PINGs go to connections idle too long.
    package var lastInputNanos: UInt64 = 0
}
