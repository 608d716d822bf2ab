/// `swiftpush status`'s text: the same lines on a terminal (with a progress bar, each line cut
/// to the terminal's width so that `--watch` can redraw them in place) and in a pipe (no bar,
/// nothing cut). Pure: a view in, lines out.
public enum StatusText {
    /// How the lines are drawn.
    public struct Style: Sendable {
        /// Draw the progress bar (a terminal).
        public var bar: Bool
        /// Cut each line to this many characters (a terminal's width); nil: never.
        public var width: Int?

        /// A style; `Style.plain` for a pipe.
        public init(bar: Bool, width: Int?) {
            self.bar = bar
            self.width = width
        }

        /// Lines for a pipe or a file.
        public static let plain = Style(bar: false, width: nil)
    }

    /// The lines of `status`, where Redis is `redis` (host:port, for the heading).
    public static func lines(_ status: FleetStatus, redis: String, style: Style) -> [String] {
        var out: [String] = []
        var heading = "swiftpush status · \(redis) · group \(status.group)"
        if let campaign = status.campaign { heading += " · campaign \(campaign)" }
        if status.timeMillis > 0 { heading += " · \(utc(status.timeMillis))" }
        out.append(heading)
        if let error = status.error { out.append("error: \(error)") }
        out += fleet(status, style: style)
        out += shards(status.shards)
        if !status.campaigns.isEmpty { out += scopes("campaign", status.campaigns, enqueued: true) }
        if !status.apps.isEmpty { out += scopes("app", status.apps, enqueued: false) }
        out += workers(status.workers)
        if !status.recentUnregistered.isEmpty {
            out.append("latest 410s: " + status.recentUnregistered.prefix(3).map {
                "\($0.token) \($0.app) \($0.reason) \(age(max(0, status.timeMillis - $0.timeMillis))) ago"
            }.joined(separator: " · "))
        }
        out += status.notes.map { "note: \($0)" }
        guard let width = style.width else { return out }
        return out.map { $0.count > width ? String($0.prefix(max(1, width - 1))) + "…" : $0 }
    }

    private static func fleet(_ s: FleetStatus, style: Style) -> [String] {
        // Shards that count notifications and shards that count entries: a line for each.
        let label = s.campaign == nil ? "fleet " : "campaign "
        let parts = s.fleet.progress.unit == .mixed ? s.fleet.progressByUnit : [s.fleet.progress]
        var out = parts.enumerated().map { i, p in
            var line = i == 0 ? label : String(repeating: " ", count: label.count)
            if style.bar { line += " " + bar(p.fraction, width: 24) }
            line += "  \(percent(p.fraction))  \(count(p.done)) of \(count(p.total)) \(p.unit.rawValue)"
            return line + "  \(rate(p.rate))  time left \(duration(p.etaSeconds))" + (i == 0 ? "  \(s.fleet.state.rawValue)" : "")
        }
        // What an operator counts in notifications, then the queue as Redis holds it, in entries
        // (a batch or multicast entry holds many notifications): never side by side unlabelled.
        let f = s.fleet
        out.append(s.campaign == nil
            ? "  notifications: waiting \(count(f.waitingNotifications)) · in flight \(count(f.inFlightNotifications)) · 410s \(count(f.unregisteredNotifications))"
            : "  notifications: 410s \(count(f.unregisteredNotifications))")
        out.append("  entries in Redis\(s.campaign == nil ? "" : " (every campaign)"): waiting \(count(f.waitingEntries)) · pending \(count(f.pendingEntries)) · delayed \(count(f.delayedEntries))")
        if let o = f.outcomes {
            out.append("  notifications: accepted \(count(o.accepted)) · rejected \(count(o.rejected)) · failed \(count(o.failed))")
            if !o.reasons.isEmpty {
                out.append("  reasons " + o.reasonsByCount.map { "\($0.reason) \(count($0.count))" }.joined(separator: " · "))
            }
        }
        return out
    }

    private static func shards(_ shards: [ShardStatus]) -> [String] {
        var rows = [["shard", "state", "done", "of", "unit", "rate", "time left", "in flight", "waiting entries", "pending entries", "delayed entries", "410s"]]
        for s in shards {
            if let error = s.error { rows.append([s.shard, "error: \(error)"]); continue }
            let p = s.progress
            rows.append([s.shard, s.state.rawValue, count(p.done), count(p.total), p.unit.rawValue, rate(p.rate), duration(p.etaSeconds),
                         count(s.inFlightNotifications), count(s.waitingEntries), count(s.pendingEntries), count(s.delayedEntries),
                         count(s.unregisteredNotifications)])
        }
        return table(rows)
    }

    private static func scopes(_ kind: String, _ scopes: [ScopeStatus], enqueued: Bool) -> [String] {
        var rows = [[kind, "state", "accepted", "rejected", "failed"] + (enqueued ? ["of", "done"] : []) + ["rate", "time left", "top reason"]]
        for s in scopes {
            let top = s.outcomes.reasonsByCount.first.map { "\($0.reason) \(count($0.count))" } ?? "-"
            rows.append([s.name, s.state.rawValue, count(s.outcomes.accepted), count(s.outcomes.rejected), count(s.outcomes.failed)]
                        + (enqueued ? [count(s.outcomes.enqueued), percent(s.progress.fraction)] : [])
                        + [rate(s.progress.rate), duration(s.progress.etaSeconds), top])
        }
        return table(rows)
    }

    private static func workers(_ workers: [WorkerStatus]) -> [String] {
        guard !workers.isEmpty else { return ["workers: none known (no heartbeat, no consumer in the group)"] }
        var rows = [["worker", "host", "pid", "shards", "heartbeat", "in flight", "pending entries", "idle"]]
        for w in workers {
            let beat = w.heartbeatAgeMillis.map { (w.stale == true ? "STALE " : "") + age($0) + " ago" } ?? "none"
            rows.append([w.consumer, w.host ?? "-", w.pid.map(String.init) ?? "-", w.shards.joined(separator: ","), beat,
                         count(w.inFlight), count(w.redisPending), w.redisIdleMillis.map(age) ?? "-"])
        }
        return table(rows)
    }

    /// Rows as columns: the first left-aligned, the rest right-aligned, two spaces apart; a row
    /// of two cells (an error) is not aligned past its first.
    static func table(_ rows: [[String]]) -> [String] {
        let columns = rows.map(\.count).max() ?? 0
        var widths = [Int](repeating: 0, count: columns)
        for row in rows where row.count == columns {
            for (i, cell) in row.enumerated() { widths[i] = max(widths[i], cell.count) }
        }
        return rows.map { row in
            guard row.count == columns else {
                return row[0].padding(widths[0]) + "  " + row.dropFirst().joined(separator: "  ")
            }
            return row.enumerated().map { i, cell in
                i == 0 ? cell.padding(widths[i]) : String(repeating: " ", count: widths[i] - cell.count) + cell
            }.joined(separator: "  ")
        }
    }
}

private extension String {
    /// Spaces added on the right up to `width`.
    func padding(_ width: Int) -> String { self + String(repeating: " ", count: max(0, width - count)) }
}
