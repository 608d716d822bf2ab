import Foundation

/// A worker's heartbeat: the JSON value of its field in `workers:{s}`, rewritten every ~2 s
/// while it runs and deleted when it stops cleanly. Only the documented fields are kept (the
/// status never passes on what else a value may hold), each optional: a heartbeat that lacks
/// one still shows the rest.
public struct Heartbeat: Equatable, Sendable {
    /// The consumer name (the hash field's name when the value does not say).
    public var consumer: String
    /// The machine it runs on.
    public var host: String?
    /// Its process id.
    public var pid: Int?
    /// The swiftpush version it runs.
    public var version: String?
    /// When it started, UNIX ms.
    public var startedMillis: Int?
    /// When it wrote this heartbeat, UNIX ms (its own clock).
    public var heartbeatMillis: Int?
    /// The shards it serves.
    public var shards: [String] = []
    /// Notifications it has in flight.
    public var inFlight: Int?
    /// Entries it holds.
    public var heldEntries: Int?
    /// Its counters (numbers only).
    public var counters: [String: Int] = [:]

    /// A heartbeat with only a consumer name.
    public init(consumer: String) { self.consumer = consumer }

    /// The heartbeat in `json` (field `field` of `workers:{s}`); nil when it is not a JSON object.
    public init?(field: String, json: String) {
        guard let object = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any] else { return nil }
        func int(_ name: String) -> Int? { (object[name] as? NSNumber).map { $0.intValue } }
        consumer = (object["consumer"] as? String) ?? field
        host = object["host"] as? String
        pid = int("pid")
        version = object["version"] as? String
        startedMillis = int("started_ms")
        heartbeatMillis = int("heartbeat_ms")
        shards = (object["shards"] as? [Any])?.compactMap { ($0 as? String) ?? ($0 as? NSNumber)?.stringValue } ?? []
        inFlight = int("in_flight")
        heldEntries = int("held_entries")
        for case let (name, number as NSNumber) in (object["counters"] as? [String: Any]) ?? [:] {
            counters[name] = number.intValue
        }
    }
}
