import Foundation
import SwiftPushRedis
@testable import SwiftPushStatus
import Testing

/// A rate is measured, never invented (issue 35): after a pause in the reads the first read has
/// none, and the chart's history has a gap there instead of a line across it.
@Suite("Rate gaps")
struct RateGapTests {
    let key = RateKey(shard: "0", scope: .all, unit: .notifications)

    @Test("The first read after a pause longer than the window has no rate, not the pause's average; the next has one")
    func pause() {
        var t = RateTracker(windowMillis: 10_000, minimumSpanMillis: 500)
        t.record([key: (time: 0, done: 0)])
        t.record([key: (time: 1_000, done: 674)])
        #expect(t.rate(key) == 674)
        t.record([key: (time: 41_000, done: 2_000)])
        #expect(t.rate(key) == nil)
        t.record([key: (time: 42_000, done: 2_000)])
        #expect(t.rate(key) == 0)
    }

    @Test("Samples older than the window are not used: the rate is over the window's samples only")
    func windowOnly() {
        var t = RateTracker(windowMillis: 10_000, minimumSpanMillis: 500)
        t.record([key: (time: 0, done: 0)])
        t.record([key: (time: 9_000, done: 9_000)])
        t.record([key: (time: 12_000, done: 9_300)])
        // The sample at 0 is 12 s old: 9,000 -> 9,300 over 3 s.
        #expect(t.rate(key) == 100)
    }

    @Test("The history breaks where a read had no rate and where reads were further apart than the window")
    func segments() {
        let ticks = [
            StatusSnapshot.Tick(timeMillis: 1_000, rates: [:], sampled: [key]),
            StatusSnapshot.Tick(timeMillis: 2_000, rates: [key: 10]),
            StatusSnapshot.Tick(timeMillis: 3_000, rates: [key: 20]),
            StatusSnapshot.Tick(timeMillis: 40_000, rates: [:], sampled: [key]),
            StatusSnapshot.Tick(timeMillis: 41_000, rates: [key: 5]),
            StatusSnapshot.Tick(timeMillis: 42_000, rates: [key: 6]),
            StatusSnapshot.Tick(timeMillis: 60_000, rates: [key: 7]),
        ]
        let h = RateHistory.of(ticks, unit: .notifications, gapMillis: 10_000) { _ in true }
        #expect(h.segments.map { $0.map(\.timeMillis) } == [[2_000, 3_000], [41_000, 42_000], [60_000]])
        // A shard of the focus without a rate at a read: no point (a partial sum would be invented).
        let other = RateKey(shard: "1", scope: .all, unit: .notifications)
        let partial = RateHistory.of([StatusSnapshot.Tick(timeMillis: 1_000, rates: [key: 3], sampled: [key, other]),
                                      StatusSnapshot.Tick(timeMillis: 2_000, rates: [key: 3, other: 4])],
                                     unit: .notifications, gapMillis: 10_000) { _ in true }
        #expect(partial.segments == [[RatePoint(timeMillis: 2_000, rate: 7)]])
        #expect(RateHistory(unit: .entries, segments: []).json() == #"{"segments":[],"unit":"entries_per_s"}"#)
    }
}

/// The reader against a real redis-server, its clock moved forward by the injected offset (a
/// pause of the reads, as when nobody looks at the page) instead of waited for.
@Suite("StatusReader across a pause", .serialized, .timeLimit(.minutes(1)))
struct ReaderPauseTests {
    final class Clock: @unchecked Sendable { var offset = 0 }

    @Test("After a pause the first read has no rate and the chart a gap; the reads after it measure again")
    func pauseInReads() throws {
        let redis = try RedisServerProcess()
        defer { redis.stop() }
        try StatusReaderTests.seed(redis)
        let clock = Clock()
        let reader = StatusReader(group: "senders", shards: .listed(["1"]), clockOffsetMillis: { clock.offset }) { try redis.connect() }
        let key = RateKey(shard: "1", scope: .all, unit: .notifications)
        var snapshots: [StatusSnapshot] = []
        for step in 0..<3 {
            snapshots.append(reader.read())
            try redis.run("HINCRBY", "stats:{1}", "accepted", "100")
            clock.offset += 1_000 + step
        }
        #expect(snapshots[0].rate(key) == nil && snapshots[1].rate(key) != nil && snapshots[2].rate(key) != nil)
        clock.offset += 30_000
        let after = reader.read()
        #expect(after.rate(key) == nil)
        #expect(FleetStatus(after).fleet.progress.rate == nil)
        clock.offset += 1_000
        let next = reader.read()
        #expect(next.rate(key) != nil)
        let history = FleetStatus(next).rateHistory
        #expect(history.segments.count == 2 && history.segments[0].count == 2 && history.segments[1].count == 1)
        #expect(history.segments[1][0].timeMillis - history.segments[0][1].timeMillis >= 30_000)
    }
}

extension RateHistory {
    /// The history's JSON alone.
    func json() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try! encoder.encode(self), as: UTF8.self)
    }
}
