import PushClientCore
import PushClientMachine
import Testing

@Suite("ConnectionState", .timeLimit(.minutes(1)))
struct ConnectionStateTests {
    /// A ready connection whose server allows `remote` streams, with `open` streams in flight.
    private func ready(local: Int = 100, remote: UInt32 = 1000, open: Int = 0, timeouts: Int = 3) -> ConnectionState {
        var s = ConnectionState(localMaxStreams: local, timeoutsBeforeRetirement: timeouts)
        s.established()
        s.settingsReceived(maxConcurrentStreams: remote)
        for _ in 0..<open { s.streamOpened() }
        return s
    }

    // MARK: Connecting and stream capacity

    @Test("A connecting connection offers no streams; once established it offers exactly one")
    func oneStreamAfterEstablished() {
        var s = ConnectionState(localMaxStreams: 100)
        #expect(s.phase == .connecting)
        #expect(s.isActive)
        #expect(s.availableStreams == 0)
        #expect(s.remoteMaxStreams == 1)
        s.established()
        #expect(s.phase == .ready)
        #expect(s.availableStreams == 1)
        #expect(s.streamLimit == 1)
    }

    @Test("SETTINGS received while connecting take effect once the connection is established")
    func settingsWhileConnecting() {
        var s = ConnectionState(localMaxStreams: 100)
        s.settingsReceived(maxConcurrentStreams: 1000)
        #expect(s.availableStreams == 0)
        s.established()
        #expect(s.availableStreams == 100)
    }

    @Test("Raising MAX_CONCURRENT_STREAMS to 1000 allows min(remote, local cap) streams", arguments: [
        (100, 100), (500, 500), (1000, 1000), (2000, 1000),
    ])
    func settingsRaiseCapacity(local: Int, expected: Int) {
        let s = ready(local: local, remote: 1000)
        #expect(s.availableStreams == expected)
        #expect(s.streamLimit == expected)
    }

    @Test("Each open stream takes one unit of capacity and each closed one gives it back")
    func openStreamsUseCapacity() {
        var s = ready(local: 10, remote: 1000, open: 3)
        #expect(s.inFlight == 3)
        #expect(s.availableStreams == 7)
        #expect(s.streamClosed(answered: true) == .none)
        #expect(s.availableStreams == 8)
    }

    @Test("A drop of MAX_CONCURRENT_STREAMS to 1 with 5 in flight allows no new stream until all but none remain")
    func dropToOne() {
        var s = ready(local: 100, remote: 1000, open: 5)
        s.settingsReceived(maxConcurrentStreams: 1)
        #expect(s.availableStreams == 0)
        for remaining in stride(from: 4, through: 1, by: -1) {
            #expect(s.streamClosed(answered: true) == .none)
            #expect(s.inFlight == remaining)
            #expect(s.availableStreams == 0)
        }
        #expect(s.streamClosed(answered: true) == .none)
        #expect(s.availableStreams == 1)
        #expect(s.phase == .ready)
    }

    @Test("MAX_CONCURRENT_STREAMS of 0 stops new streams on a ready connection")
    func zeroStreams() {
        let s = ready(remote: 0)
        #expect(s.availableStreams == 0)
        #expect(s.phase == .ready)
    }

    @Test("nghttp2's 'unlimited' value is clamped to Int32.max and the local cap applies")
    func unlimitedRemote() {
        var s = ready(local: 100, remote: .max)
        #expect(s.remoteMaxStreams == Int(Int32.max))
        #expect(s.availableStreams == 100)
        s.settingsReceived(maxConcurrentStreams: UInt32(Int32.max))
        #expect(s.remoteMaxStreams == Int(Int32.max))
    }

    @Test("The local cap and the timeout threshold are at least 1")
    func initClampsLimits() {
        let s = ConnectionState(localMaxStreams: 0, timeoutsBeforeRetirement: -5)
        #expect(s.localMaxStreams == 1)
        #expect(s.timeoutsBeforeRetirement == 1)
    }

    @Test("Closing more streams than were opened never makes inFlight negative")
    func inFlightNeverNegative() {
        var s = ready()
        #expect(s.streamClosed(answered: true) == .none)
        #expect(s.inFlight == 0)
        #expect(s.streamTimedOut() == .none)
        #expect(s.inFlight == 0)
    }

    // MARK: GOAWAY

    @Test("GOAWAY with streams in flight asks for a replacement and stops new streams")
    func goawayWithStreamsInFlight() {
        var s = ready(open: 3)
        #expect(s.goawayReceived(lastStreamID: 5, reason: "Shutdown") == .replace)
        #expect(s.phase == .draining(lastStreamID: 5))
        #expect(s.availableStreams == 0)
        #expect(!s.isActive)
        #expect(s.goawayReason == "Shutdown")
        #expect(s.goawayLastStreamID == 5)
    }

    @Test("Only streams above the GOAWAY's last-stream-id count as unprocessed")
    func unprocessedAboveLastStreamID() {
        var s = ready(open: 3)
        _ = s.goawayReceived(lastStreamID: 5, reason: nil)
        #expect(!s.wasUnprocessed(streamID: 1))
        #expect(!s.wasUnprocessed(streamID: 3))
        #expect(!s.wasUnprocessed(streamID: 5))
        #expect(s.wasUnprocessed(streamID: 7))
        #expect(s.wasUnprocessed(streamID: 9))
    }

    @Test("GOAWAY with last-stream-id 0 means no stream was processed")
    func goawayZero() {
        var s = ready(open: 1)
        _ = s.goawayReceived(lastStreamID: 0, reason: nil)
        #expect(s.wasUnprocessed(streamID: 1))
    }

    @Test("While draining, closing streams asks for nothing until the last one, which asks to close")
    func lastStreamClosesDrainingConnection() {
        var s = ready(open: 3)
        _ = s.goawayReceived(lastStreamID: 5, reason: nil)
        #expect(s.streamClosed(answered: true) == .none)
        #expect(s.streamClosed(answered: false) == .none)
        #expect(s.availableStreams == 0)
        #expect(s.streamClosed(answered: true) == .close)
    }

    @Test("GOAWAY with nothing in flight asks to close at once")
    func goawayWhenIdle() {
        var s = ready()
        #expect(s.goawayReceived(lastStreamID: 0, reason: nil) == .close)
        #expect(s.phase == .draining(lastStreamID: 0))
    }

    @Test("GOAWAY before the connection is established asks to close it")
    func goawayWhileConnecting() {
        var s = ConnectionState(localMaxStreams: 10)
        #expect(s.goawayReceived(lastStreamID: 0, reason: nil) == .close)
        s.established()
        #expect(s.phase == .draining(lastStreamID: 0))
        #expect(s.availableStreams == 0)
    }

    @Test("A second GOAWAY can lower the last-stream-id but never raise it")
    func secondGoawayOnlyLowers() {
        var s = ready(open: 4)
        #expect(s.goawayReceived(lastStreamID: 9, reason: "first") == .replace)
        #expect(s.goawayReceived(lastStreamID: 5, reason: nil) == .none)
        #expect(s.phase == .draining(lastStreamID: 5))
        #expect(s.goawayLastStreamID == 5)
        #expect(s.goawayReason == "first")
        #expect(s.goawayReceived(lastStreamID: 11, reason: "third") == .none)
        #expect(s.phase == .draining(lastStreamID: 5))
        #expect(s.goawayLastStreamID == 5)
        #expect(s.goawayReason == "third")
        #expect(s.wasUnprocessed(streamID: 7))
    }

    @Test("A second GOAWAY on a draining connection with nothing in flight asks to close")
    func secondGoawayWhenIdle() {
        var s = ready(open: 1)
        _ = s.goawayReceived(lastStreamID: 1, reason: nil)
        _ = s.streamClosed(answered: true)
        #expect(s.goawayReceived(lastStreamID: 1, reason: nil) == .close)
    }

    @Test("A GOAWAY after we retired the connection keeps it draining and records its last-stream-id")
    func goawayAfterRetire() {
        var s = ready(open: 2)
        #expect(s.retire() == .replace)
        #expect(s.goawayReceived(lastStreamID: 3, reason: nil) == .none)
        #expect(s.phase == .draining(lastStreamID: 3))
        #expect(s.wasUnprocessed(streamID: 5))
    }

    @Test("A GOAWAY after close changes nothing but is remembered")
    func goawayAfterClose() {
        var s = ready()
        s.closed()
        #expect(s.goawayReceived(lastStreamID: 3, reason: "late") == .none)
        #expect(s.phase == .closed)
        #expect(s.goawayLastStreamID == 3)
    }

    @Test("Without a GOAWAY no stream counts as unprocessed")
    func noGoawayNoUnprocessed() {
        var s = ready(open: 1)
        #expect(!s.wasUnprocessed(streamID: 1))
        _ = s.retire()
        #expect(!s.wasUnprocessed(streamID: 101))
    }

    // MARK: Timeouts

    @Test("Consecutive timeouts retire the connection at the threshold and ask for a replacement")
    func timeoutsRetire() {
        var s = ready(open: 5, timeouts: 3)
        #expect(s.streamTimedOut() == .none)
        #expect(s.streamTimedOut() == .none)
        #expect(s.consecutiveTimeouts == 2)
        #expect(s.phase == .ready)
        #expect(s.streamTimedOut() == .replace)
        #expect(s.consecutiveTimeouts == 3)
        #expect(s.phase == .draining(lastStreamID: nil))
        #expect(s.availableStreams == 0)
        #expect(s.streamClosed(answered: true) == .none)
        #expect(s.streamClosed(answered: true) == .close)
    }

    @Test("Reaching the timeout threshold with nothing else in flight asks to close")
    func timeoutsRetireIdle() {
        var s = ready(open: 2, timeouts: 2)
        #expect(s.streamTimedOut() == .none)
        #expect(s.streamTimedOut() == .close)
        #expect(s.phase == .draining(lastStreamID: nil))
    }

    @Test("An answered stream resets the timeout count; an unanswered close does not")
    func answeredResetsCount() {
        var s = ready(open: 6, timeouts: 3)
        _ = s.streamTimedOut()
        _ = s.streamTimedOut()
        #expect(s.streamClosed(answered: false) == .none)
        #expect(s.consecutiveTimeouts == 2)
        #expect(s.streamClosed(answered: true) == .none)
        #expect(s.consecutiveTimeouts == 0)
        #expect(s.streamTimedOut() == .none)
        #expect(s.streamTimedOut() == .none)
        #expect(s.phase == .ready)
    }

    @Test("Timeouts on a draining connection never ask for a second replacement, only a close at the end")
    func timeoutsWhileDraining() {
        var s = ready(open: 4, timeouts: 1)
        #expect(s.goawayReceived(lastStreamID: 1, reason: nil) == .replace)
        #expect(s.streamTimedOut() == .none)
        #expect(s.streamTimedOut() == .none)
        #expect(s.streamTimedOut() == .none)
        #expect(s.streamTimedOut() == .close)
        #expect(s.phase == .draining(lastStreamID: 1))
    }

    // MARK: Retire and close

    @Test("retire() with streams in flight drains and asks for a replacement")
    func retireWithStreams() {
        var s = ready(open: 2)
        #expect(s.retire() == .replace)
        #expect(s.phase == .draining(lastStreamID: nil))
        #expect(s.availableStreams == 0)
        #expect(!s.isActive)
        #expect(s.streamClosed(answered: true) == .none)
        #expect(s.streamClosed(answered: true) == .close)
    }

    @Test("retire() with nothing in flight asks to close, from ready or connecting")
    func retireIdle() {
        var r = ready()
        #expect(r.retire() == .close)
        var c = ConnectionState(localMaxStreams: 10)
        #expect(c.retire() == .close)
        #expect(c.phase == .draining(lastStreamID: nil))
    }

    @Test("retire() on a connection already draining or closed does nothing")
    func retireTwice() {
        var s = ready(open: 1)
        _ = s.goawayReceived(lastStreamID: 1, reason: nil)
        #expect(s.retire() == .none)
        #expect(s.phase == .draining(lastStreamID: 1))
        s.closed()
        #expect(s.retire() == .none)
        #expect(s.phase == .closed)
    }

    @Test("A closed connection offers no streams, is inactive and is not revived by established()")
    func closedIsFinal() {
        var s = ready(open: 1)
        s.closed()
        #expect(s.phase == .closed)
        #expect(s.availableStreams == 0)
        #expect(!s.isActive)
        s.established()
        #expect(s.phase == .closed)
    }
}
