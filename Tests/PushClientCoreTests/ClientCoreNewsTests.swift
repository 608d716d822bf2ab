import PushCore
import Testing
@testable import PushClientCore
@testable import PushClientMachine

/// What the core hands the driver instead of calling out (issue 34): log lines are actions for
/// the driver to report, and what is to be published is taken whole. In memory.
@Suite("ClientCore: log lines and news, as the driver takes them")
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
            h.core.maintainPool(now: h.now, callersWaiting: true)
            for action in h.takeActions() {
                seen.append(action)
                switch action {
                case .resolve:
                    h.core.resolutionStarted(ticket: 1)
                    h.core.resolutionAnswered(ticket: 1, .success([CoreHarness.address]), now: h.now)
                case .connect(let id, _):
                    h.core.connectStarted(id, fallback: [], now: h.now)
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
}
