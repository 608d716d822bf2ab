import Testing
@testable import APNsMock

/// The stream limit as a machine, in memory: the connection's events in, its actions out
/// (the same rules StreamLimitTests checks on the wire, apns.md "Streams per connection").
@Suite(.timeLimit(.minutes(1))) struct StreamLimitMachineTests {
    /// A token connection whose initial SETTINGS (1) are submitted.
    func tokenConnection(configured: UInt32 = 1000, lenient: Bool = false) -> StreamLimit {
        var m = StreamLimit(configured: configured, token: true, lenient: lenient)
        m.announced(m.initial)
        return m
    }

    /// A token connection raised to `configured` by its first 200, everything acknowledged.
    func raisedConnection(configured: UInt32 = 1000) -> StreamLimit {
        var m = tokenConnection(configured: configured)
        m.acknowledgedSettings()
        _ = m.answered(stream: 1, accepted: true, dropAfterRejection: false)
        if case .announce(let v) = m.headersSent(stream: 1) { m.announced(v) }
        m.acknowledgedSettings()
        return m
    }

    @Test("A token connection starts at one stream, held from the first byte")
    func tokenStartsAtOne() {
        let m = tokenConnection()
        #expect(m.initial == 1)
        #expect(m.enforced == 1)
        #expect(m.admits(1) && !m.admits(2))
    }

    @Test("Lenient: the initial limit holds only once acknowledged")
    func lenientInitialLimit() {
        var m = tokenConnection(lenient: true)
        #expect(m.admits(100), "before the acknowledgement, nghttp2's refusals are the only limit")
        m.acknowledgedSettings()
        #expect(m.enforced == 1)
    }

    @Test("Certificate and accept-all connections start at the configured limit, and a 200 raises nothing")
    func otherConnectionsStartRaised() {
        var m = StreamLimit(configured: 50, token: false, lenient: false)
        #expect(m.initial == 50)
        m.announced(m.initial)
        #expect(m.answered(stream: 1, accepted: true, dropAfterRejection: false) == .none)
        #expect(m.headersSent(stream: 1) == .none)
        #expect(m.enforced == 50)
    }

    @Test("The first 200 raises the limit once its HEADERS are sent, not before, and the raise counts at once")
    func raiseAfterFirstSuccess() {
        var m = tokenConnection(configured: 500)
        #expect(m.answered(stream: 1, accepted: true, dropAfterRejection: false) == .none)
        #expect(m.raiseAfterStream == 1)
        #expect(m.headersSent(stream: 3) == .none, "another stream's HEADERS")
        #expect(m.headersSent(stream: 1) == .announce(500))
        m.announced(500)
        #expect(m.enforced == 500, "a raise holds as soon as it is sent")
        #expect(m.headersSent(stream: 1) == .none, "announced once")
        #expect(m.answered(stream: 3, accepted: true, dropAfterRejection: false) == .none)
        #expect(m.raiseAfterStream == 0, "later 200s arm nothing")
    }

    @Test("A rejection neither raises the limit nor, without the fault, drops it")
    func rejectionsWithoutTheFault() {
        var m = tokenConnection()
        #expect(m.answered(stream: 1, accepted: false, dropAfterRejection: true) == .none, "not raised yet: nothing to drop")
        #expect(m.raiseAfterStream == 0)
        var raised = raisedConnection()
        #expect(raised.answered(stream: 5, accepted: false, dropAfterRejection: false) == .none)
        #expect(raised.enforced == 1000)
    }

    @Test("With the fault, a rejection drops the limit to 1, which holds once acknowledged; the next 200 raises it again")
    func dropAndRaiseAgain() {
        var m = raisedConnection(configured: 1000)
        #expect(m.answered(stream: 5, accepted: false, dropAfterRejection: true) == .announce(1))
        m.announced(1)
        #expect(m.enforced == 1000, "a drop waits for the client's acknowledgement")
        #expect(m.answered(stream: 7, accepted: false, dropAfterRejection: true) == .none, "dropped once")
        m.acknowledgedSettings()
        #expect(m.enforced == 1)
        #expect(m.answered(stream: 9, accepted: true, dropAfterRejection: true) == .none)
        #expect(m.headersSent(stream: 9) == .announce(1000))
        m.announced(1000)
        #expect(m.enforced == 1000)
    }

    @Test("Acknowledgements count in order: a raise in flight behind an acknowledged drop still holds")
    func acknowledgementsInOrder() {
        var m = raisedConnection(configured: 100)
        _ = m.answered(stream: 5, accepted: false, dropAfterRejection: true)
        m.announced(1)
        _ = m.answered(stream: 7, accepted: true, dropAfterRejection: true)
        _ = m.headersSent(stream: 7)
        m.announced(100)
        m.acknowledgedSettings()   // the drop
        #expect(m.enforced == 100, "the raise behind it is in flight")
        m.acknowledgedSettings()   // the raise
        #expect(m.enforced == 100)
        m.acknowledgedSettings()   // nothing in flight: ignored
        #expect(m.enforced == 100)
    }

    @Test("A stream beyond the limit refuses the connection, and nothing is announced after")
    func violation() {
        var m = tokenConnection()
        #expect(m.streamOpening(openStreams: 0) == .none)
        _ = m.answered(stream: 1, accepted: true, dropAfterRejection: false)
        #expect(m.streamOpening(openStreams: 1) == .refuseConnection, "the raise is not sent yet")
        #expect(m.headersSent(stream: 1) == .none, "no raise on the way out")
        var raised = raisedConnection(configured: 2)
        #expect(raised.streamOpening(openStreams: 1) == .none)
        #expect(raised.streamOpening(openStreams: 2) == .refuseConnection)
    }
}
