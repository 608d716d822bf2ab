import PushCore

/// The events that may decide actions, each returning them: called with `actions:`, an event
/// appends what it decided to the caller's buffer (`moveActions`), so the driver carries out
/// what the event it just reported asked for, with no queue to read. The buffer is the caller's
/// and reused, so the hot path (`absorb`, `streamsStarted`) allocates nothing. Each is the
/// event of the same name (its rule is documented there) followed by `moveActions`.
extension ClientCore {
    /// `turn(now:closing:drainMillis:callersWaiting:)`, returning its actions.
    package mutating func turn(now: UInt64, closing: Bool, drainMillis: Int32, callersWaiting: Bool, actions out: inout [Action]) {
        turn(now: now, closing: closing, drainMillis: drainMillis, callersWaiting: callersWaiting)
        moveActions(into: &out)
    }

    /// `absorb(_:from:now:)`, returning its actions.
    @inline(__always)
    package mutating func absorb(_ input: inout ConnectionInput, from id: ConnectionID, now: UInt64, actions out: inout [Action]) {
        absorb(&input, from: id, now: now)
        moveActions(into: &out)
    }

    /// `streamsStarted(_:on:tokenGeneration:now:)`, returning its actions.
    @inline(__always)
    package mutating func streamsStarted(_ started: inout SlotList, on id: ConnectionID, tokenGeneration: Int, now: UInt64,
                                         actions out: inout [Action]) {
        streamsStarted(&started, on: id, tokenGeneration: tokenGeneration, now: now)
        moveActions(into: &out)
    }

    /// `streamsNotStarted(_:on:idsExhausted:errorText:)`, returning its actions.
    package mutating func streamsNotStarted(_ rest: inout SlotList, on id: ConnectionID, idsExhausted: Bool, errorText: @autoclosure () -> String,
                                            actions out: inout [Action]) {
        streamsNotStarted(&rest, on: id, idsExhausted: idsExhausted, errorText: errorText())
        moveActions(into: &out)
    }

    /// `resolutionAnswered(ticket:_:now:)`, returning its actions.
    package mutating func resolutionAnswered(ticket: UInt64, _ result: Result<[SocketAddress], TransportError>, now: UInt64,
                                             actions out: inout [Action]) {
        resolutionAnswered(ticket: ticket, result, now: now)
        moveActions(into: &out)
    }

    /// `connectStarted(_:fallback:now:)`, returning its actions.
    package mutating func connectStarted(_ id: ConnectionID, fallback: [SocketAddress], now: UInt64, actions out: inout [Action]) {
        connectStarted(id, fallback: fallback, now: now)
        moveActions(into: &out)
    }

    /// `connectFailed(_:error:now:)`, returning its actions.
    package mutating func connectFailed(_ id: ConnectionID, error: TransportError, now: UInt64, actions out: inout [Action]) {
        connectFailed(id, error: error, now: now)
        moveActions(into: &out)
    }

    /// `connectionClosed(_:error:now:)`, returning its actions.
    package mutating func connectionClosed(_ id: ConnectionID, error: TransportError?, now: UInt64, actions out: inout [Action]) {
        connectionClosed(id, error: error, now: now)
        moveActions(into: &out)
    }

    /// `tokenVerdict(_:on:text:now:)`, returning its actions.
    package mutating func tokenVerdict(_ verdict: TokenExpiryVerdict, on id: ConnectionID, text: String, now: UInt64, actions out: inout [Action]) {
        tokenVerdict(verdict, on: id, text: text, now: now)
        moveActions(into: &out)
    }

    /// `shutDown(now:)`, returning its actions (a `.terminate` for every connection).
    package mutating func shutDown(now: UInt64, actions out: inout [Action]) {
        shutDown(now: now)
        moveActions(into: &out)
    }
}
