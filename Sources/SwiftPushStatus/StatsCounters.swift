/// The counters of one shard's `stats:{s}` hash, which the workers' settle script increments in
/// the same atomic call that records the outcomes, and the producers (`swiftpush enqueue`,
/// Python `Producer`) increment when they add entries:
///
/// | field | counts |
/// | --- | --- |
/// | `enqueued`, `accepted`, `rejected`, `failed` | notifications of the shard |
/// | `reason:<Reason>` | rejected and failed ones by reason |
/// | `app:<app>:<accepted\|rejected\|failed>` | by app |
/// | `campaign:<name>:<enqueued\|accepted\|rejected\|failed>` | by campaign |
/// | `campaign:<name>:reason:<Reason>` | a campaign's by reason |
///
/// Names may hold `:`; a field is read from its end (kinds are lowercase, reasons start with a
/// capital letter, as in the reasons table). Fields that are not integers, or that this table
/// does not name, are ignored (a later worker may count more).
public struct StatsCounters: Equatable, Sendable {
    /// The whole shard.
    public var total = OutcomeCounts()
    /// By app (no reasons: the script counts an app's kinds only).
    public var apps: [String: OutcomeCounts] = [:]
    /// By campaign.
    public var campaigns: [String: OutcomeCounts] = [:]

    /// No counters.
    public init() {}

    /// The counters of `HGETALL stats:{s}`'s field/value pairs.
    public init(fields: [(String, String)]) {
        for (name, text) in fields {
            guard let value = Int(text) else { continue }
            let parts = name.split(separator: ":", omittingEmptySubsequences: false)
            if parts.count == 1 {
                _ = total.add(value, kind: parts[0])
            } else if parts.count == 2, parts[0] == "reason", !parts[1].isEmpty {
                total.reasons[String(parts[1]), default: 0] += value
            } else if parts.count >= 3, parts[0] == "app" {
                let app = parts[1..<(parts.count - 1)].joined(separator: ":")
                var counts = apps[app] ?? OutcomeCounts()
                if counts.add(value, kind: parts[parts.count - 1]) { apps[app] = counts }
            } else if parts.count >= 3, parts[0] == "campaign" {
                let last = parts[parts.count - 1]
                if last.first?.isLowercase == true {
                    let campaign = parts[1..<(parts.count - 1)].joined(separator: ":")
                    var counts = campaigns[campaign] ?? OutcomeCounts()
                    if counts.add(value, kind: last) { campaigns[campaign] = counts }
                } else if parts.count >= 4, parts[parts.count - 2] == "reason", !last.isEmpty {
                    let campaign = parts[1..<(parts.count - 2)].joined(separator: ":")
                    campaigns[campaign, default: OutcomeCounts()].reasons[String(last), default: 0] += value
                }
            }
        }
    }
}
