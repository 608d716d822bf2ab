import Foundation
@testable import SwiftPushStatus
import SwiftPushWorker
import Testing
import SwiftPushKeys

/// Every count in the status JSON says its unit in its name (issue 35): `waiting 181 · in
/// flight 11` counted entries beside totals counting notifications.
@Suite("JSON units")
struct JSONUnitsTests {
    /// Names that count something and say what: notifications, entries, records, or time.
    static let unitSuffixes = ["_notifications", "_entries", "_records", "_per_s", "_ms", "_s"]
    /// Names that are a unit themselves (`reasons[].notifications`), and numbers that are no
    /// count of notifications or entries: a pid, a fraction, how many shards or consumers.
    static let notCounts: Set<String> = ["notifications", "entries", "pid", "fraction", "shards", "consumers"]
    /// The JSON's true/false keys.
    static let boolKeys: Set<String> = ["known", "counted", "stale", "live"]

    /// Every key holding a number, with its path; the workers' `counters` and `gauges` are
    /// `/metrics`' names, which stay as they are (documented there).
    static func numberKeys(_ value: Any, path: String = "") -> [String] {
        switch value {
        case let object as [String: Any]:
            return object.flatMap { key, v -> [String] in
                if key == "counters" || key == "gauges" { return [] }
                // JSONSerialization gives booleans as NSNumber too: they are known by name.
                if v is NSNumber, !boolKeys.contains(key) {
                    return ["\(path).\(key)"]
                }
                return numberKeys(v, path: "\(path).\(key)")
            }
        case let list as [Any]:
            return list.flatMap { numberKeys($0, path: path + "[]") }
        default:
            return []
        }
    }

    @Test("Every number in the JSON is under a name that says its unit")
    func units() throws {
        var r = FleetStatusTests.counted("0")
        var h = Heartbeat(consumer: "w1")
        h.heartbeatMillis = FleetStatusTests.now - 1000
        h.inFlight = 60
        h.heldEntries = 2
        h.pid = 7
        h.counters = ["sent": 3]
        r.heartbeats = [h]
        r.consumers = [ConsumerInfo(name: "w1", pending: 60, idleMillis: 20)]
        r.recentUnregistered = [UnregisteredToken(shard: "0", token: "ab…cd", app: "demo", reason: "Unregistered", timeMillis: 1)]
        var legacy = ShardReading(shard: "1", timeMillis: FleetStatusTests.now)
        legacy.streamExists = true
        legacy.group = GroupInfo(pending: 0, lag: 2, entriesRead: 5, consumers: 1)
        let rates: [RateKey: Double] = [RateKey(shard: "0", scope: .all, unit: .notifications): 12]
        var status = FleetStatus(FleetStatusTests.snapshot([r, legacy], rates: rates))
        status.thisWorker = LocalWorkerStatus(consumer: "w1", shards: ["0"], live: true,
                                              outcomes: [.init(app: "demo", outcome: "ACCEPTED", reason: "", count: 5)],
                                              counters: ["read": 1], gauges: ["lag": 2])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(status.json().utf8)) as? [String: Any])
        let keys = Self.numberKeys(object)
        let unnamed = keys.filter { path in
            let name = String(path.split(separator: ".").last ?? "")
            return !Self.notCounts.contains(name) && !Self.unitSuffixes.contains { name.hasSuffix($0) }
        }
        #expect(unnamed.isEmpty, "numbers without a unit in their name: \(unnamed)")
        // Enough was there to look at: the fleet, a shard, a worker, this worker's outcomes.
        for expected in [".fleet.waiting_notifications", ".fleet.in_flight_notifications", ".fleet.waiting_entries",
                         ".fleet.pending_entries", ".shards[].progress.done_entries", ".workers[].in_flight_notifications",
                         ".workers[].redis_pending_entries", ".this_worker.outcomes[].notifications"] {
            #expect(keys.contains(expected), "\(expected) missing from \(keys.sorted())")
        }
        let fleet = try #require(object["fleet"] as? [String: Any])
        // 360 remain of the counted shard, 60 of them in flight at its worker.
        #expect(fleet["waiting_notifications"] as? Int == 300 && fleet["in_flight_notifications"] as? Int == 60)
        #expect(fleet["waiting_entries"] as? Int == 302 && fleet["pending_entries"] as? Int == 60)
    }
}
