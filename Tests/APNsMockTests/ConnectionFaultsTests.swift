import Testing
@testable import APNsMock

/// The per-connection fault counts in memory: GOAWAY and kill after N answers.
@Suite(.timeLimit(.minutes(1))) struct ConnectionFaultsTests {
    @Test("GOAWAY is due from the Nth answer on until one is sent; the kill from the Nth answer on")
    func dueAfterN() {
        var faults = MockFaults()
        faults.goawayAfterRequests = 2
        faults.goawayReason = "Shutdown"
        faults.killConnectionAfterRequests = 3
        var counts = ConnectionFaults(generation: 1)
        var due: [ConnectionFaults.AfterAnswer] = []
        for _ in 0..<3 {
            counts.countAnswer()
            due.append(counts.due(faults, goawaySent: false))
        }
        #expect(due == [.init(), .init(goawayReason: "Shutdown"), .init(goawayReason: "Shutdown", kill: true)])
        #expect(counts.due(faults, goawaySent: true) == .init(kill: true), "one GOAWAY per connection")
    }

    @Test("Counts of 0 or none ask for nothing")
    func off() {
        var faults = MockFaults()
        faults.goawayAfterRequests = 0
        var counts = ConnectionFaults(generation: 1)
        counts.countAnswer()
        #expect(counts.due(faults, goawaySent: false) == .init())
    }

    @Test("New faults (a new generation) restart the count; the same generation keeps it")
    func newGenerationRestarts() {
        var counts = ConnectionFaults(generation: 1)
        counts.countAnswer()
        counts.countAnswer()
        counts.follow(generation: 1)
        #expect(counts.answered == 2)
        counts.follow(generation: 2)
        #expect(counts.answered == 0)
    }
}
