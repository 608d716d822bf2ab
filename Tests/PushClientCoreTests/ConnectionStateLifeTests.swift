import PushCore
import PushClientCore
import PushClientMachine
import Testing

/// The connection machine beyond stream capacity: the transport phases, what answers do to the
/// connection (5xx runs, answers that retire it), the timers (connect timeout, health PINGs) and
/// how its end counts for the back-off. Pure: no sockets, made-up times.
@Suite("ConnectionState: transport, answers, timers, ending", .timeLimit(.minutes(1)))
struct ConnectionStateLifeTests {
    static let ms: UInt64 = 1_000_000
    /// PING after 1 s idle, 500 ms to answer it, 2 s to connect.
    let timers = ClientTimers(idlePingMillis: 1000, pingTimeoutMillis: 500, connectTimeoutMillis: 2000)

    /// A connection started at `started` that went through TCP, TLS and the server's SETTINGS.
    private func ready(open: Int = 0, serverErrors: Int = 3, started: UInt64 = 0) -> ConnectionState {
        var s = ConnectionState(localMaxStreams: 100, serverErrorsBeforeRetirement: serverErrors, startedNanos: started)
        s.tcpConnected(throughProxy: false)
        s.handshakeCompleted()
        s.settingsReceived(maxConcurrentStreams: 1000)
        for _ in 0..<open { s.streamOpened() }
        return s
    }

    // MARK: Transport phases

    @Test("Direct: connecting → handshaking → awaitingSettings → ready, each a milestone; no streams before ready")
    func directPhases() {
        var s = ConnectionState(localMaxStreams: 10)
        #expect(s.phase == .connecting && s.isOpening && !s.reachedTCP)
        s.tcpConnected(throughProxy: false)
        #expect(s.phase == .handshaking && s.reachedTCP && s.availableStreams == 0)
        s.handshakeCompleted()
        #expect(s.phase == .awaitingSettings && !s.everEstablished && s.availableStreams == 0)
        let first = s.settingsReceived(maxConcurrentStreams: 5)
        #expect(first && s.phase == .ready && s.everEstablished && !s.isOpening)
        #expect(s.availableStreams == 5)
        let second = s.settingsReceived(maxConcurrentStreams: 7)
        #expect(!second, "only the first SETTINGS makes it ready")
    }

    @Test("Through a proxy: connecting → tunneling → handshaking once the tunnel opens")
    func proxyPhases() {
        var s = ConnectionState(localMaxStreams: 10)
        s.tcpConnected(throughProxy: true)
        #expect(s.phase == .tunneling && s.reachedTCP && s.isActive && s.isOpening)
        s.tunnelOpened()
        #expect(s.phase == .handshaking)
        s.tcpConnected(throughProxy: true)
        s.tunnelOpened()
        #expect(s.phase == .handshaking, "repeated reports change nothing")
        s.handshakeCompleted()
        #expect(s.phase == .awaitingSettings)
    }

    @Test("Transport steps never revive a retired or closed connection")
    func transportStepsAfterEnd() {
        var s = ConnectionState(localMaxStreams: 10)
        #expect(s.retire() == .close)
        s.tcpConnected(throughProxy: false)
        #expect(s.phase == .draining(lastStreamID: nil))
        s.closed()
        s.handshakeCompleted()
        let madeReady = s.settingsReceived(maxConcurrentStreams: 10)
        #expect(!madeReady)
        #expect(s.phase == .closed && s.availableStreams == 0 && !s.everEstablished)
    }

    // MARK: Answers

    @Test("A run of 5xx answers retires the connection at the threshold; it asks for a replacement while streams remain")
    func serverErrorsRetire() {
        var s = ready(open: 5, serverErrors: 3)
        #expect(s.streamEnded(.rejected(.internalServerError)) == .none)
        #expect(s.streamEnded(.rejected(.serviceUnavailable)) == .none)
        #expect(s.consecutiveServerErrors == 2 && s.phase == .ready)
        #expect(s.streamEnded(.rejected(.internalServerError)) == .replace)
        #expect(s.phase == .draining(lastStreamID: nil))
        #expect(s.history.retiredByClient && !s.endIsConnectionError)
        #expect(s.streamEnded(.accepted) == .none)
        #expect(s.streamEnded(.accepted) == .close, "the last stream of a retired connection closes it")
    }

    @Test("The 5xx that reaches the threshold with nothing else in flight asks to close")
    func serverErrorsRetireIdle() {
        var s = ready(open: 1, serverErrors: 1)
        #expect(s.streamEnded(.rejected(.serviceUnavailable)) == .close)
    }

    @Test("An accepted answer ends the 5xx run; other error answers, timeouts and unanswered streams do not")
    func serverErrorRunEnds() {
        var s = ready(open: 8, serverErrors: 3)
        _ = s.streamEnded(.rejected(.internalServerError))
        _ = s.streamEnded(.rejected(.internalServerError))
        _ = s.streamEnded(.rejected(.badDeviceToken))
        _ = s.streamEnded(.rejected(.tooManyRequests))
        _ = s.streamEnded(.unanswered)
        _ = s.streamTimedOut()
        #expect(s.consecutiveServerErrors == 2)
        #expect(s.streamEnded(.accepted) == .none)
        #expect(s.consecutiveServerErrors == 0)
        #expect(s.streamEnded(.rejected(.internalServerError)) == .none)
        #expect(s.phase == .ready)
    }

    @Test("An answer saying APNs will not use the connection retires it at once", arguments: [
        APNsReason.expiredProviderToken, .tooManyProviderTokenUpdates, .idleTimeout,
    ])
    func answersThatRetire(reason: APNsReason) {
        var s = ready(open: 2)
        #expect(s.streamEnded(.rejected(reason)) == .replace)
        #expect(s.phase == .draining(lastStreamID: nil) && s.history.retiredByClient)
    }

    @Test("Answers about one notification, and credential refusals, leave the connection ready", arguments: [
        APNsReason.badDeviceToken, .unregistered, .tooManyRequests, .invalidProviderToken, .badCertificate,
    ])
    func answersThatKeep(reason: APNsReason) {
        var s = ready(open: 2)
        #expect(s.streamEnded(.rejected(reason)) == .none)
        #expect(s.phase == .ready && !s.history.retiredByClient)
    }

    @Test("Any answer ends the timeout run, an unanswered stream does not")
    func answersEndTimeoutRun() {
        var s = ready(open: 6)
        _ = s.streamTimedOut()
        _ = s.streamEnded(.unanswered)
        #expect(s.consecutiveTimeouts == 1)
        _ = s.streamEnded(.rejected(.badDeviceToken))
        #expect(s.consecutiveTimeouts == 0)
        _ = s.streamTimedOut()
        _ = s.streamEnded(.accepted)
        #expect(s.consecutiveTimeouts == 0)
    }

    @Test("A run of timeouts that retires a ready connection marks it retired by us; a timeout that only closes a connection draining after a GOAWAY does not")
    func timeoutsMarkRetired() {
        var s = ready(open: 3)
        _ = s.streamTimedOut()
        #expect(!s.history.retiredByClient)
        _ = s.streamTimedOut()
        #expect(s.streamTimedOut() == .close && s.history.retiredByClient, "the third timeout in a row retires it")
        var g = ready(open: 1)
        _ = g.goawayReceived(lastStreamID: 1, reason: nil)
        #expect(g.streamTimedOut() == .close)
        #expect(!g.history.retiredByClient, "the GOAWAY ended it; closing it after its last stream is not our retirement")
        g.closed()
        #expect(g.endIsConnectionError)
    }

    @Test("A connection draining after a GOAWAY stays the server's to end: retiring it changes nothing, and its abrupt end is still a connection error")
    func retireWhileDrainingAfterGoaway() {
        var s = ready(open: 3, serverErrors: 1)
        #expect(s.goawayReceived(lastStreamID: 5, reason: "Shutdown") == .replace)
        #expect(s.retire() == .none)
        #expect(s.phase == .draining(lastStreamID: 5) && !s.history.retiredByClient, "the GOAWAY's last-stream-id is kept")
        #expect(s.streamEnded(.rejected(.internalServerError)) == .none, "a 5xx run reaching the threshold while draining")
        #expect(s.streamEnded(.rejected(.expiredProviderToken)) == .none, "an answer that would retire a ready connection")
        #expect(!s.history.retiredByClient && s.inFlight == 1)
        s.closed()
        #expect(s.endIsConnectionError, "lost with a stream in flight: reported as the last connection error")
    }

    @Test("A connection we retired stays ours when a GOAWAY follows; retiring a closed one changes nothing")
    func retiredThenGoaway() {
        var s = ready(open: 2)
        #expect(s.retire() == .replace && s.history.retiredByClient)
        #expect(s.goawayReceived(lastStreamID: 1, reason: nil) == .none)
        #expect(s.history.retiredByClient && !s.endIsConnectionError)
        var c = ready()
        c.closed()
        #expect(c.retire() == .none && !c.history.retiredByClient && c.phase == .closed)
    }

    // MARK: Timers

    @Test("The connect timeout gives up on a connection still opening, naming the missing SETTINGS once TLS is up")
    func connectTimeout() {
        var s = ConnectionState(localMaxStreams: 10, startedNanos: 1_000 * Self.ms)
        #expect(s.checkConnectTimeout(now: 3_000 * Self.ms, timers: timers) == .none, "exactly the timeout is not late")
        #expect(s.checkConnectTimeout(now: 3_001 * Self.ms, timers: timers) == .fail(.connectTimedOut))
        s.tcpConnected(throughProxy: true)
        #expect(s.checkConnectTimeout(now: 3_001 * Self.ms, timers: timers) == .fail(.connectTimedOut), "tunneling")
        s.tunnelOpened()
        #expect(s.checkConnectTimeout(now: 3_001 * Self.ms, timers: timers) == .fail(.connectTimedOut), "handshaking")
        s.handshakeCompleted()
        #expect(s.checkConnectTimeout(now: 3_001 * Self.ms, timers: timers) == .fail(.settingsTimedOut))
        s.settingsReceived(maxConcurrentStreams: 10)
        #expect(s.checkConnectTimeout(now: 9_999 * Self.ms, timers: timers) == .none, "ready: no connect timeout")
        _ = s.retire()
        #expect(s.checkConnectTimeout(now: 9_999 * Self.ms, timers: timers) == .none)
    }

    @Test("An idle connection gets one PING; its ACK clears it; an unanswered one gives the connection up")
    func pingLifecycle() {
        var s = ready()
        let input = 10_000 * Self.ms
        #expect(s.checkHealth(now: input + 1_000 * Self.ms, lastInputNanos: input, timers: timers) == .none, "idle exactly the idle time")
        #expect(s.checkHealth(now: input + 1_001 * Self.ms, lastInputNanos: input, timers: timers) == .ping)
        #expect(s.pingSentNanos == input + 1_001 * Self.ms)
        #expect(s.checkHealth(now: input + 1_400 * Self.ms, lastInputNanos: input, timers: timers) == .none, "one PING at a time")
        s.pingAcknowledged()
        #expect(s.pingSentNanos == 0)
        #expect(s.checkHealth(now: input + 1_600 * Self.ms, lastInputNanos: input + 1_500 * Self.ms, timers: timers) == .none)
        #expect(s.checkHealth(now: input + 2_600 * Self.ms, lastInputNanos: input + 1_500 * Self.ms, timers: timers) == .ping)
        #expect(s.checkHealth(now: input + 3_101 * Self.ms, lastInputNanos: input + 1_500 * Self.ms, timers: timers) == .fail(.pingUnanswered))
    }

    @Test("A draining connection is PINGed too; one without TLS, or closed, or with PINGs off, never")
    func pingWhere() {
        var draining = ready(open: 1)
        _ = draining.goawayReceived(lastStreamID: 1, reason: nil)
        #expect(draining.checkHealth(now: 5_000 * Self.ms, lastInputNanos: 0, timers: timers) == .ping)
        var awaiting = ConnectionState(localMaxStreams: 1)
        awaiting.tcpConnected(throughProxy: false)
        #expect(awaiting.checkHealth(now: 5_000 * Self.ms, lastInputNanos: 0, timers: timers) == .none, "TLS not up")
        awaiting.handshakeCompleted()
        #expect(awaiting.checkHealth(now: 5_000 * Self.ms, lastInputNanos: 0, timers: timers) == .ping)
        var closed = ready()
        closed.closed()
        #expect(closed.checkHealth(now: 5_000 * Self.ms, lastInputNanos: 0, timers: timers) == .none)
        var off = ready()
        let noPings = ClientTimers(idlePingMillis: 0, pingTimeoutMillis: 500, connectTimeoutMillis: 2000)
        #expect(off.checkHealth(now: 5_000 * Self.ms, lastInputNanos: 0, timers: noPings) == .none)
    }

    // MARK: Ending

    @Test("A connection that never got the server's SETTINGS ends as a failed attempt")
    func endingBeforeReady() {
        var s = ConnectionState(localMaxStreams: 1)
        s.tcpConnected(throughProxy: false)
        s.handshakeCompleted()
        s.closed()
        #expect(s.ending == .failedAttempt)
        #expect(s.endIsConnectionError)
    }

    @Test("A ready connection whose writes got no answer ends as a failed attempt; an idle one, or one answered, ends ordinarily")
    func endingAfterReady() {
        var unanswered = ready(open: 1)
        _ = unanswered.streamEnded(.unanswered)
        #expect(unanswered.ending == .failedAttempt)
        let idle = ready()
        #expect(idle.ending == .ordinary)
        var answered = ready(open: 1)
        _ = answered.streamEnded(.rejected(.badDeviceToken))
        #expect(answered.ending == .ordinary)
    }

    @Test("A credential refusal is no answer for the ending, and is counted once: the ending is then already counted")
    func refusalCountedOnce() {
        var s = ready(open: 2)
        _ = s.streamEnded(.rejected(.invalidProviderToken))
        #expect(s.ending == .failedAttempt, "a refusal is not an answer")
        let first = s.countRefusal(), second = s.countRefusal()
        #expect(first && !second)
        #expect(s.ending == .counted)
        #expect(!s.endIsConnectionError)
    }

    @Test("A connection with an accepted notification ends already counted (success reset the back-off)")
    func endingAfterSuccess() {
        var s = ready(open: 2)
        _ = s.streamEnded(.accepted)
        #expect(s.history.hadSuccess && s.history.answered && s.history.sentAny)
        _ = s.streamEnded(.unanswered)
        s.closed()
        #expect(s.ending == .counted)
        #expect(s.endIsConnectionError, "an abrupt end after success is still reported")
    }

    @Test("The 5xx threshold is at least 1")
    func serverErrorThresholdClamped() {
        #expect(ConnectionState(localMaxStreams: 1, serverErrorsBeforeRetirement: 0).serverErrorsBeforeRetirement == 1)
    }
}
