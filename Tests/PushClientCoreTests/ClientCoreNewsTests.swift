import PushCore
import Testing
@testable import PushClientCore
@testable import PushClientMachine

/// What the core hands the driver instead of calling out (issue 34): log lines and the provider
/// token's news are actions for the driver to carry out, and what is to be published is taken
/// whole. In memory.
@Suite("ClientCore: log lines, the token's news and the outbox, as the driver takes them")
struct ClientCoreNewsTests {
    /// Counts calls of a log callback (called, if at all, on the test's own thread).
    final class Calls: @unchecked Sendable {
        var count = 0
    }

    /// A one-connection core whose log callback wants `minLevel` and counts its calls.
    static func harness(minLevel: LogLevel, calls: Calls) -> CoreHarness {
        var c = ClientConfiguration()
        c.pool.connections = 1
        return CoreHarness(configuration: c, log: ClientLog(callback: LogCallback(minLevel: minLevel) { _, _, _ in calls.count += 1 }))
    }

    /// The actions that starting the pool's connection leads to (the name resolved at once).
    static func startingActions(_ h: inout CoreHarness) -> [ClientCore.Action] {
        var seen: [ClientCore.Action] = []
        for _ in 0..<2 {
            h.maintainPool(callersWaiting: true)
            for action in h.takeActions() {
                seen.append(action)
                switch action {
                case .resolve:
                    h.core.resolutionStarted(ticket: 1)
                    h.core.resolutionAnswered(ticket: 1, .success([CoreHarness.address]), now: h.now, actions: &h.actions)
                case .connect(let id, _):
                    h.core.connectStarted(id, fallback: [], now: h.now, actions: &h.actions)
                    seen += h.takeActions()
                default:
                    break
                }
            }
        }
        return seen
    }

    @Test("A connection's log line is a .log action: the core never runs the log callback itself")
    func logLineIsAnAction() {
        let calls = Calls()
        var h = Self.harness(minLevel: .debug, calls: calls)
        let lines = Self.startingActions(&h).compactMap { action -> (LogLevel, ClientLog.Event, String)? in
            if case .log(let level, let event, let message) = action { return (level, event, message) }
            return nil
        }
        #expect(lines.count == 1)
        #expect(lines.first?.0 == .debug)
        #expect(lines.first?.1 == .connecting)
        #expect(lines.first?.2.hasPrefix("connecting to api.push.apple.com:443") == true)
        #expect(calls.count == 0, "the core called the log callback")
    }

    @Test("A line below the callback's level is not asked for")
    func belowLevelIsNotAskedFor() {
        let calls = Calls()
        var h = Self.harness(minLevel: .info, calls: calls)
        let logs = Self.startingActions(&h).filter { if case .log = $0 { return true } else { return false } }
        #expect(logs.isEmpty)
        #expect(calls.count == 0)
    }

    @Test("takeNews hands the outbox over whole and leaves the core with nothing to publish")
    func takeNewsHandsOverTheOutbox() {
        var c = ClientConfiguration()
        c.pool.connections = 1
        var h = CoreHarness(configuration: c)
        _ = h.startConnections()
        #expect(h.core.hasNews, "a connection attempt is news (the stats' connections)")
        var news = ResultOutbox()
        h.core.takeNews(into: &news)
        #expect(!h.core.hasNews)
        #expect(!news.isEmpty)
        #expect(h.core.queuedCount == 0 && h.core.inFlightCount == 0)
    }

    /// A one-connection core signing provider tokens, its connection ready.
    static func tokenHarness() -> (CoreHarness, ConnectionID) {
        var c = ClientConfiguration()
        c.pool.connections = 1
        var h = CoreHarness(configuration: c, tokenAuthentication: true)
        let id = h.connect(maxStreams: 100)[0]
        return (h, id)
    }

    @Test("An accepted answer tells the token through a .tokenAccepted action")
    func tokenAcceptedIsAnAction() {
        var (h, id) = Self.tokenHarness()
        let n = h.submit(1)[0]
        h.dispatch()
        h.answer(n, on: id)
        let told = h.takeActions().compactMap { action -> Int? in
            if case .tokenAccepted(let generation) = action { return generation }
            return nil
        }
        #expect(told == [0])
    }

    @Test("An expired token is a .tokenExpired action: the refusal, the back-off and the clock's name wait for the token's verdict")
    func tokenExpiryIsAnAction() {
        var (h, id) = Self.tokenHarness()
        let n = h.submit(1, deadlineMillis: 1_000)[0]
        h.dispatch()
        h.answer(n, on: id, status: 403, reason: "ExpiredProviderToken")
        let asked = h.takeActions().compactMap { action -> (ConnectionID, Int, String)? in
            if case .tokenExpired(let on, let generation, let text) = action { return (on, generation, text) }
            return nil
        }
        #expect(asked.count == 1 && asked.first?.0 == id && asked.first?.1 == 0)
        #expect(h.core.lastConnectionError == nil, "no refusal before the verdict")
        h.core.tokenVerdict(.clockSuspect(iat: 100, localTime: 200), on: id, text: asked.first?.2 ?? "", now: h.now, actions: &h.actions)
        #expect(h.core.clockSuspectText?.contains("check this host's clock") == true)
        #expect(h.core.lastConnectionError?.description.contains("iat=100") == true, "\(String(describing: h.core.lastConnectionError))")
        #expect(h.core.backoff.nextAttemptNanos > h.now, "the client backs off")
        h.advance(millis: 1_000)
        _ = h.turn()
        #expect(h.result(n).text.contains("check this host's clock"), "the notification names the clock")
    }
}
