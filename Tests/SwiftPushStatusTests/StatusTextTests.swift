@testable import SwiftPushStatus
import SwiftPushWorker
import Testing
import SwiftPushKeys

@Suite("StatusText", .timeLimit(.minutes(1)))
struct StatusTextTests {
    @Test("Counts are grouped by thousands; unknown is a dash")
    func counts() {
        #expect(StatusText.count(0) == "0" && StatusText.count(999) == "999" && StatusText.count(1000) == "1,000")
        #expect(StatusText.count(1_234_567) == "1,234,567" && StatusText.count(-12_345) == "-12,345" && StatusText.count(nil) == "-")
    }

    @Test("Rates show a decimal under 10 per second, whole numbers above")
    func rates() {
        #expect(StatusText.rate(0) == "0.0/s" && StatusText.rate(2.46) == "2.5/s" && StatusText.rate(9.94) == "9.9/s")
        #expect(StatusText.rate(12_345.6) == "12,346/s" && StatusText.rate(nil) == "-")
    }

    @Test("Time left reads as seconds, minutes or hours, and done at zero")
    func durations() {
        #expect(StatusText.duration(0) == "done" && StatusText.duration(0.2) == "1s" && StatusText.duration(42) == "42s")
        #expect(StatusText.duration(185) == "3m 05s" && StatusText.duration(7380) == "2h 03m" && StatusText.duration(400_000) == ">99h")
        #expect(StatusText.duration(nil) == "-")
    }

    @Test("Ages, percentages, times and bars")
    func others() {
        #expect(StatusText.age(400) == "0.4s" && StatusText.age(12_000) == "12s" && StatusText.age(180_000) == "3m")
        #expect(StatusText.age(7_200_000) == "2h" && StatusText.age(3 * 86_400_000) == "3d")
        #expect(StatusText.percent(0.4826) == "48.2%" && StatusText.percent(1) == "100.0%" && StatusText.percent(nil) == "-")
        #expect(StatusText.utc(1_700_000_000_123) == "2023-11-14 22:13:20 UTC")
        #expect(StatusText.bar(0.5, width: 8) == "[████░░░░]" && StatusText.bar(nil, width: 4) == "[░░░░]" && StatusText.bar(1.2, width: 2) == "[██]")
    }

    @Test("A terminal gets the bar and lines cut to its width; a pipe gets neither")
    func styles() {
        var r = FleetStatusTests.counted("0")
        var h = Heartbeat(consumer: "w1")
        h.heartbeatMillis = FleetStatusTests.now - 1000
        h.inFlight = 45
        r.heartbeats = [h]
        let s = FleetStatus(FleetStatusTests.snapshot([r]))
        let plain = StatusText.lines(s, redis: "127.0.0.1:6379", style: .plain)
        #expect(plain[0] == "swiftpush status · 127.0.0.1:6379 · group senders · 2023-11-14 22:15:00 UTC")
        #expect(plain[1] == "fleet   64.0%  640 of 1,000 notifications  -  time left -  working")
        // Notifications and stream entries on lines of their own, each saying its unit.
        #expect(plain[2] == "  notifications: waiting 315 · in flight 45 · 410s 30")
        #expect(plain[3] == "  entries in Redis: waiting 300 · pending 60 · delayed 0")
        #expect(plain[4] == "  notifications: accepted 600 · rejected 40 · failed 0")
        #expect(plain[5] == "  reasons Unregistered 30 · BadDeviceToken 10")
        #expect(!plain.joined().contains("█"))
        let terminal = StatusText.lines(s, redis: "127.0.0.1:6379", style: .init(bar: true, width: 40))
        #expect(terminal[1].hasPrefix("fleet  [███████████████░░░░░░░░░]") && terminal.allSatisfy { $0.count <= 40 })
        #expect(terminal[0].hasSuffix("…"))
    }

    @Test("The shard table aligns its columns; an unreadable shard shows its error on its row")
    func shardTable() {
        let s = FleetStatus(FleetStatusTests.snapshot([FleetStatusTests.counted("0"), ShardReading(shard: "12", timeMillis: 0, error: "boom")]))
        let lines = StatusText.lines(s, redis: "r", style: .plain)
        let header = try! #require(lines.firstIndex { $0.hasPrefix("shard") })
        #expect(lines[header] == "shard    state  done     of           unit  rate  time left  in flight  waiting entries  pending entries  delayed entries  410s")
        #expect(lines[header + 1] == "0      working   640  1,000  notifications     -          -          -              300               60                0    30")
        #expect(lines[header + 2] == "12     error: boom")
    }

    @Test("Workers show their heartbeat's age, STALE when old, and what Redis saw of them")
    func workerTable() {
        var r = FleetStatusTests.counted("0")
        var h = Heartbeat(consumer: "w1")
        h.heartbeatMillis = FleetStatusTests.now - 30_000
        h.host = "hostA"
        h.pid = 42
        r.heartbeats = [h]
        r.consumers = [ConsumerInfo(name: "w1", pending: 5, idleMillis: 200)]
        let lines = StatusText.lines(FleetStatus(FleetStatusTests.snapshot([r])), redis: "r", style: .plain)
        let row = try! #require(lines.first { $0.hasPrefix("w1") })
        #expect(row.contains("hostA") && row.contains("42") && row.contains("STALE 30s ago") && row.contains("0.2s"))
    }
}
