import Foundation

/// A worker's heartbeat: the JSON value of its field in `workers:{s}`, rewritten every ~2 s
/// while it runs and deleted when it stops cleanly (docs/worker.md, "Status"). One type for
/// both ends: the worker encodes it (`WorkerDriver`), `swiftpush status` and the status page
/// decode it, so the two cannot disagree on a name. Decoding keeps only these fields and is
/// lenient, each field on its own: a heartbeat that lacks one, or holds it with another type,
/// still shows the rest (a fleet may run workers of several versions).
public struct Heartbeat: Codable, Equatable, Sendable {
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
    /// Its counters (numbers only), named as `ShardMachine.Counters.table` names them.
    public var counters: [String: Int] = [:]

    enum CodingKeys: String, CodingKey {
        case consumer, host, pid, version, startedMillis = "started_ms", heartbeatMillis = "heartbeat_ms", shards
        case inFlight = "in_flight", heldEntries = "held_entries", counters
    }

    /// A heartbeat with only a consumer name.
    public init(consumer: String) { self.consumer = consumer }

    /// The heartbeat in `json` (field `field` of `workers:{s}`); nil when it is not a JSON object.
    public init?(field: String, json: String) {
        guard var h = try? JSONDecoder().decode(Heartbeat.self, from: Data(json.utf8)) else { return nil }
        if h.consumer.isEmpty { h.consumer = field }
        self = h
    }

    /// Decodes the fields it knows, each one that is missing or of another type left empty.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        func int(_ key: CodingKeys) -> Int? { (try? c.decodeIfPresent(Loose.self, forKey: key))?.int }
        consumer = (try? c.decodeIfPresent(String.self, forKey: .consumer)) ?? ""
        host = try? c.decodeIfPresent(String.self, forKey: .host)
        pid = int(.pid)
        version = try? c.decodeIfPresent(String.self, forKey: .version)
        startedMillis = int(.startedMillis)
        heartbeatMillis = int(.heartbeatMillis)
        shards = (try? c.decodeIfPresent([Loose].self, forKey: .shards))?.compactMap(\.text) ?? []
        inFlight = int(.inFlight)
        heldEntries = int(.heldEntries)
        counters = (try? c.decodeIfPresent([String: Loose].self, forKey: .counters))?.compactMapValues(\.int) ?? [:]
    }

    /// The JSON text the worker writes.
    public var json: String {
        (try? JSONEncoder().encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    /// A JSON value read without insisting on its type: a number (whole, or with a fraction
    /// cut off), a string, or anything else (neither).
    private enum Loose: Decodable {
        case number(Int), string(String), other

        init(from decoder: any Decoder) throws {
            let c = try decoder.singleValueContainer()
            if let n = try? c.decode(Int.self) {
                self = .number(n)
            } else if let d = try? c.decode(Double.self), d.isFinite, abs(d) < 9e18 {
                self = .number(Int(d))
            } else if let s = try? c.decode(String.self) {
                self = .string(s)
            } else {
                self = .other
            }
        }

        var int: Int? { if case .number(let n) = self { n } else { nil } }
        /// A shard's name: a string, or a number written as one.
        var text: String? {
            switch self {
            case .number(let n): String(n)
            case .string(let s): s
            case .other: nil
            }
        }
    }
}
