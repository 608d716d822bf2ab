import SwiftPushRedis

/// `swiftpush enqueue --batch N`: JSON lines gathered into batch entries (format 2: `v 2`,
/// `notifications`, a JSON array of the lines' objects as they were written), one group per
/// stream, app and campaign, since a batch's app and campaign are entry-level fields
/// (docs/worker.md, "Entries (format version 2)").
struct BatchEntryGrouper {
    /// A batch entry ready to be written.
    struct Entry {
        let command: RedisArguments
        let stream: String
        let count: Int
        let campaign: String?
    }

    private struct Key: Hashable {
        let stream: String, app: String, campaign: String?
    }
    private var groups: [Key: [[UInt8]]] = [:]

    /// Adds one line's JSON object; returns the group's entry when it reached `limit` lines.
    mutating func add(_ object: [UInt8], stream: String, app: String, campaign: String?, limit: Int) -> Entry? {
        let key = Key(stream: stream, app: app, campaign: campaign)
        groups[key, default: []].append(object)
        guard groups[key]!.count >= limit else { return nil }
        return take(key)
    }

    /// Every group not written yet, as entries.
    mutating func drain() -> [Entry] {
        groups.keys.sorted { ($0.stream, $0.app, $0.campaign ?? "") < ($1.stream, $1.app, $1.campaign ?? "") }.compactMap { take($0) }
    }

    private mutating func take(_ key: Key) -> Entry? {
        guard let lines = groups.removeValue(forKey: key), !lines.isEmpty else { return nil }
        var array: [UInt8] = [UInt8(ascii: "[")]
        array.reserveCapacity(lines.reduce(2) { $0 + $1.count + 1 })
        for (k, line) in lines.enumerated() {
            if k > 0 { array.append(UInt8(ascii: ",")) }
            array += line
        }
        array.append(UInt8(ascii: "]"))
        var command = RedisArguments(reservingBytes: array.count + 128)
        for field in ["XADD", key.stream, "*", "v", "2"] { command.append(field) }
        if !key.app.isEmpty { command.append("app"); command.append(key.app) }
        if let c = key.campaign, !c.isEmpty { command.append("campaign"); command.append(c) }
        command.append("notifications")
        command.append(array)
        return Entry(command: command, stream: key.stream, count: lines.count, campaign: key.campaign)
    }
}
