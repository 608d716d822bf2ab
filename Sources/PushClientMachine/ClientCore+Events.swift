import PushCore

/// The events that may decide actions, each returning them: called with `actions:`, an event
/// lends the core the caller's buffer (`lend`) and what it decides is appended to it, so the
/// driver carries out what the event it just reported asked for. This is the only way out for
/// an action: the core keeps no queue, and the forms without `actions:` are internal to the
/// machine (the driver, in another module, cannot call them). The buffer is the caller's and
/// reused, so the hot path (`absorb`, `streamsStarted`) allocates nothing. Each is the event of
/// the same name (its rule is documented there) between `lend` and `takeBack`.
extension ClientCore {
    /// `turn(now:closing:drainMillis:callersWaiting:)`, returning its actions.
    package mutating func turn(now: UInt64, closing: Bool, drainMillis: Int32, callersWaiting: Bool, actions out: inout [Action]) {
        lend(&out)
        turn(now: now, closing: closing, drainMillis: drainMillis, callersWaiting: callersWaiting)
        takeBack(&out)
    }

    /// `absorb(_:from:now:)`, returning its actions.
    @inline(__always)
    package mutating func absorb(_ input: inout ConnectionInput, from id: ConnectionID, now: UInt64, actions out: inout [Action]) {
        lend(&out)
        absorb(&input, from: id, now: now)
        takeBack(&out)
    }

    /// `streamsStarted(_:on:tokenGeneration:now:)`, returning its actions.
    @inline(__always)
    package mutating func streamsStarted(_ started: inout SlotList, on id: ConnectionID, tokenGeneration: Int, now: UInt64,
                                         actions out: inout [Action]) {
        lend(&out)
        streamsStarted(&started, on: id, tokenGeneration: tokenGeneration, now: now)
        takeBack(&out)
    }

    /// `streamsNotStarted(_:on:idsExhausted:errorText:)`, returning its actions.
    package mutating func streamsNotStarted(_ rest: inout SlotList, on id: ConnectionID, idsExhausted: Bool, errorText: @autoclosure () -> String,
                                            actions out: inout [Action]) {
        lend(&out)
        streamsNotStarted(&rest, on: id, idsExhausted: idsExhausted, errorText: errorText())
        takeBack(&out)
    }

    /// `resolutionAnswered(ticket:_:now:)`, returning its actions.
    package mutating func resolutionAnswered(ticket: UInt64, _ result: Result<[SocketAddress], TransportError>, now: UInt64,
                                             actions out: inout [Action]) {
        lend(&out)
        resolutionAnswered(ticket: ticket, result, now: now)
        takeBack(&out)
    }

    /// `connectStarted(_:fallback:now:)`, returning its actions.
    package mutating func connectStarted(_ id: ConnectionID, fallback: [SocketAddress], now: UInt64, actions out: inout [Action]) {
        lend(&out)
        connectStarted(id, fallback: fallback, now: now)
        takeBack(&out)
    }

    /// `connectFailed(_:error:now:)`, returning its actions.
    package mutating func connectFailed(_ id: ConnectionID, error: TransportError, now: UInt64, actions out: inout [Action]) {
        lend(&out)
        connectFailed(id, error: error, now: now)
        takeBack(&out)
    }

    /// `connectionClosed(_:error:now:)`, returning its actions.
    package mutating func connectionClosed(_ id: ConnectionID, error: TransportError?, now: UInt64, actions out: inout [Action]) {
        lend(&out)
        connectionClosed(id, error: error, now: now)
        takeBack(&out)
    }

    /// `tokenVerdict(_:on:text:now:)`, returning its actions.
    package mutating func tokenVerdict(_ verdict: TokenExpiryVerdict, on id: ConnectionID, text: String, now: UInt64, actions out: inout [Action]) {
        lend(&out)
        tokenVerdict(verdict, on: id, text: text, now: now)
        takeBack(&out)
    }

    /// `shutDown(now:)`, returning its actions (a `.terminate` for every connection).
    package mutating func shutDown(now: UInt64, actions out: inout [Action]) {
        lend(&out)
        shutDown(now: now)
        takeBack(&out)
    }
}
