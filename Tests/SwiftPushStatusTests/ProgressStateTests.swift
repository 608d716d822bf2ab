@testable import SwiftPushStatus
import Testing

/// Each view says what it is doing in a word, and nothing is "done" that never started or does
/// not exist (issue 35).
@Suite("ProgressState")
struct ProgressStateTests {
    static let now = FleetStatusTests.now

    /// A counted shard whose every enqueued notification has its outcome, the stream empty.
    static func finished(_ shard: String) -> ShardReading {
        var r = ShardReading(shard: shard, timeMillis: now)
        r.streamExists = true
        r.group = GroupInfo(pending: 0, lag: 0, entriesRead: 2, consumers: 1)
        r.stats = StatsCounters(fields: [("enqueued", "1000"), ("accepted", "1000")])
        return r
    }

    @Test("A fleet before any work is idle, with no time left (not 'done'); an empty Redis is idle")
    func idle() {
        let empty = FleetStatus(FleetStatusTests.snapshot([ShardReading(shard: "0", timeMillis: Self.now)]))
        #expect(empty.fleet.state == .idle && empty.fleet.progress.etaSeconds == nil)
        #expect(StatusText.lines(empty, redis: "r", style: .plain)[1] == "fleet   -  0 of 0 entries  -  time left -  idle")
        #expect(FleetStatus(FleetStatusTests.snapshot([])).fleet.state == .idle)
        #expect(ProgressFigures(unit: .notifications, done: 0, remaining: 0, rate: 0).etaSeconds == nil)
    }

    @Test("Everything settled and nothing queued is done; anything remaining or queued is working")
    func doneAndWorking() {
        let done = FleetStatus(FleetStatusTests.snapshot([Self.finished("0")]))
        #expect(done.fleet.state == .done && done.shards[0].state == .done && done.fleet.progress.etaSeconds == 0)
        var queued = Self.finished("0")
        queued.group = GroupInfo(pending: 0, lag: 3, entriesRead: 2, consumers: 1)
        #expect(FleetStatus(FleetStatusTests.snapshot([queued])).fleet.state == .working)
        #expect(FleetStatus(FleetStatusTests.snapshot([FleetStatusTests.counted("0")])).fleet.state == .working)
        #expect(ProgressState.of(ProgressFigures(unit: .notifications, done: 5, remaining: nil, rate: 3), queuedEntries: 0) == .working)
        #expect(ProgressState.of(ProgressFigures(unit: .notifications, done: 5, remaining: nil, rate: nil), queuedEntries: 0) == .idle)
    }

    @Test("A misspelt campaign is unknown in every view: JSON, the CLI's lines, its row")
    func unknownCampaign() {
        let s = FleetStatus(FleetStatusTests.snapshot([FleetStatusTests.counted("0"), Self.finished("1")]), focus: StatusFocus(campaign: "sprin"))
        #expect(s.fleet.state == .unknown && s.campaigns.map(\.state) == [.unknown] && s.fleet.progress.rate == nil)
        let lines = StatusText.lines(s, redis: "r", style: .plain)
        #expect(lines[1] == "campaign   -  - of - notifications  -  time left -  unknown")
        #expect(lines.contains("note: campaign sprin unknown: no shard shown counts it; known campaigns: spring"))
    }

    @Test("A campaign's rate is one figure everywhere: a shard that never saw it does not blank the sum")
    func campaignRate() {
        let spring = RateKey(shard: "0", scope: .campaign("spring"), unit: .notifications)
        let rates: [RateKey: Double] = [spring: 20, RateKey(shard: "0", scope: .all, unit: .notifications): 30,
                                        RateKey(shard: "1", scope: .all, unit: .notifications): 0]
        let snapshot = FleetStatusTests.snapshot([FleetStatusTests.counted("0"), Self.finished("1")], rates: rates)
        let row = FleetStatus(snapshot).campaigns.first { $0.name == "spring" }
        let focused = FleetStatus(snapshot, focus: StatusFocus(campaign: "spring"))
        #expect(row?.progress.rate == 20 && focused.fleet.progress.rate == 20 && focused.campaigns[0].progress.rate == 20)
        #expect(row?.progress.done == 205 && focused.fleet.progress.done == 205 && row?.state == .working)
        // Its chart is that figure too.
        #expect(focused.rateHistory.segments.flatMap { $0.map(\.rate) } == [10, 20])
    }
}
