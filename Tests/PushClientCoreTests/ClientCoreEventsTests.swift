import PushCore
import Testing
@testable import PushClientCore
@testable import PushClientMachine

/// Events that return their actions (issue 34): called with `actions:`, an event appends what it
/// decided to the caller's buffer, lent to the core for the event, and leaves nothing in the
/// core (it has no queue of actions); a driver reusing its buffer allocates nothing. In memory.
@Suite("ClientCore: events return their actions")
struct ClientCoreEventsTests {
    @Test("turn, resolutionAnswered and connectFailed return their actions in order in the caller's buffer; nothing stays in the core")
    func eventsReturnActions() {
        var c = ClientConfiguration()
        c.pool.connections = 2
        c.recovery.unreachableAfterMillis = 0
        var h = CoreHarness(configuration: c, random: CoreRandom(seed: 5))
        var out: [ClientCore.Action] = []
        h.core.turn(now: h.now, closing: false, drainMillis: 0, callersWaiting: true, actions: &out)
        guard case .resolve? = out.first, out.count == 1 else { Issue.record("\(out)"); return }
        #expect(!h.core.holdsActions)
        h.core.resolutionStarted(ticket: 9)
        out.removeAll(keepingCapacity: true)
        h.core.resolutionAnswered(ticket: 9, .success([CoreHarness.address]), now: h.now, actions: &out)
        #expect(out.isEmpty, "the answer serves the next turn")
        h.core.turn(now: h.now, closing: false, drainMillis: 0, callersWaiting: true, actions: &out)
        let ids = out.compactMap(\.connects)
        #expect(ids.count == 2 && !h.core.holdsActions)
        // Appended after what the caller still holds: the first refusal's back-off step.
        h.core.connectFailed(ids[0], error: TransportError(.connect, "Connection refused"), now: h.now, actions: &out)
        #expect(out.count == 3)
        guard case .backoff(.failed(let at, _, _)) = out.last else { Issue.record("\(out)"); return }
        #expect(at == h.now && !h.core.holdsActions && h.core.backoff.failures == 1)
    }

    @Test("A driver reusing one buffer allocates nothing: over many events every action is appended to that one buffer")
    func oneBufferLent() {
        var c = ClientConfiguration()
        c.pool.connections = 1
        c.recovery.unreachableAfterMillis = 0
        var h = CoreHarness(configuration: c, random: CoreRandom(seed: 5))
        var out: [ClientCore.Action] = []
        out.reserveCapacity(16)
        var buffers = Set<UInt>()
        var ticket: UInt64 = 0
        for _ in 0..<20 {
            // Each round: a turn asks for the name, the answer lets the next turn connect, the
            // connect fails (a back-off step), and the back-off is waited out.
            for _ in 0..<2 {
                h.core.turn(now: h.now, closing: false, drainMillis: 0, callersWaiting: true, actions: &out)
                for action in out {
                    if case .resolve = action {
                        ticket += 1
                        h.core.resolutionStarted(ticket: ticket)
                        h.core.resolutionAnswered(ticket: ticket, .success([CoreHarness.address]), now: h.now, actions: &out)
                    }
                }
                let ids = out.compactMap(\.connects)
                _ = out.withUnsafeBufferPointer { buffers.insert(UInt(bitPattern: $0.baseAddress)) }
                out.removeAll(keepingCapacity: true)
                for id in ids { h.core.connectFailed(id, error: TransportError(.connect, "Connection refused"), now: h.now, actions: &out) }
                out.removeAll(keepingCapacity: true)
            }
            h.waitOutBackoff()
            h.advance(millis: 1)
        }
        #expect(h.core.backoff.failures >= 10, "every round failed once")
        #expect(buffers.count == 1, "\(buffers.count) buffers")
    }
}
