/// Building a view: the snapshot's readings seen through a focus, added up.
extension FleetStatus {
    /// The latest 410s shown.
    static let recentUnregisteredShown = 10

    /// `snapshot` seen through `focus`: the shards it names (a shard not read is empty), the
    /// whole fleet or one campaign (one nobody counted is all zeros).
    public init(_ snapshot: StatusSnapshot, focus: StatusFocus = StatusFocus()) {
        let scope = focus.scope
        let shown = focus.shards.map { names in
            ShardSelection.ordered(names).map { name in
                snapshot.readings.first { $0.shard == name } ?? ShardReading(shard: name, timeMillis: snapshot.timeMillis)
            }
        } ?? snapshot.readings
        let readable = shown.filter { $0.error == nil }
        func rate(_ r: ShardReading, _ scope: StatusScope) -> Double? {
            snapshot.rate(RateKey(shard: r.shard, scope: scope, unit: r.unit))
        }

        timeMillis = snapshot.timeMillis
        group = snapshot.group
        campaign = focus.campaign
        shards = shown.map { ShardStatus($0, scope: scope, rate: rate($0, scope)) }

        let counted = readable.compactMap { $0.counts(scope) }
        let waits = readable.map(\.waiting)
        // A campaign's progress is known only where it is counted: the other shards' entries
        // are not its.
        let parts = shards.filter { $0.error == nil && (scope == .all || $0.counted) }.map(\.progress)
        let byUnit = [CountUnit.notifications, .entries].compactMap { unit in
            let same = parts.filter { $0.unit == unit }
            return same.isEmpty ? nil : ProgressFigures.sum(same)
        }
        fleet = FleetSummary(
            shards: readable.count,
            waiting: waits.contains { $0 == nil } ? nil : waits.reduce(0) { $0 + $1! },
            pending: readable.reduce(0) { $0 + $1.pending },
            delayed: readable.reduce(0) { $0 + $1.delayed },
            unregistered: focus.campaign == nil ? readable.reduce(0) { $0 + $1.unregistered } : counted.reduce(0) { $0 + $1.gone },
            outcomes: counted.isEmpty ? nil : counted.dropFirst().reduce(counted[0], +),
            progress: ProgressFigures.sum(parts),
            progressByUnit: byUnit)

        func scopes(_ names: Set<String>, _ make: (String) -> StatusScope) -> [ScopeStatus] {
            names.sorted().map { name in
                let parts = readable.filter(\.counted)
                let counts = parts.compactMap { $0.counts(make(name)) }
                return ScopeStatus(
                    name: name,
                    outcomes: counts.dropFirst().reduce(counts.first ?? OutcomeCounts(), +),
                    progress: ProgressFigures.sum(parts.map {
                        ProgressFigures(unit: .notifications, done: $0.done(make(name)), remaining: $0.remaining(make(name)), rate: rate($0, make(name)))
                    }))
            }
        }
        if let name = focus.campaign {
            apps = []
            campaigns = scopes([name]) { .campaign($0) }
            recentUnregistered = []
        } else {
            apps = scopes(Set(readable.flatMap { $0.stats?.apps.keys.map { $0 } ?? [] })) { .app($0) }
            campaigns = scopes(Set(readable.flatMap { $0.stats?.campaigns.keys.map { $0 } ?? [] })) { .campaign($0) }
            recentUnregistered = Array(readable.flatMap(\.recentUnregistered)
                .sorted { $0.timeMillis > $1.timeMillis }.prefix(Self.recentUnregisteredShown))
        }
        workers = WorkerStatus.merged(readable, at: snapshot.timeMillis)

        let names = Set(shown.map(\.shard))
        history = snapshot.history.compactMap { tick in
            let parts = tick.rates.filter { names.contains($0.key.shard) && $0.key.scope == scope }
            return parts.isEmpty ? nil : RatePoint(timeMillis: tick.timeMillis, rate: parts.values.reduce(0, +))
        }
        notes = Self.notes(shown: shown, readable: readable, focus: focus)
        error = snapshot.error
    }

    /// What the figures cannot say, and why (one line each).
    private static func notes(shown: [ShardReading], readable: [ShardReading], focus: StatusFocus) -> [String] {
        var notes: [String] = []
        if shown.isEmpty { notes.append("no shard found (no push:{s} stream): name them with --shards") }
        func list(_ rs: [ShardReading]) -> String { (rs.count == 1 ? "shard " : "shards ") + rs.map(\.shard).joined(separator: ", ") }
        let uncounted = readable.filter { !$0.counted && ($0.streamExists || $0.outcomeRecords > 0) }
        if !uncounted.isEmpty {
            notes.append("\(list(uncounted)): no stats:{s}, the workers there count no outcomes in Redis: progress is in stream entries from the consumer group; outcomes by reason, app and campaign are not known")
        }
        let unknownLag = readable.filter { $0.waiting == nil }
        if !unknownLag.isEmpty {
            notes.append("\(list(unknownLag)): Redis cannot tell the group's lag (entries deleted or the group moved): waiting and time left unknown")
        }
        let noEnqueued = readable.filter { $0.counts(focus.scope).map { $0.enqueued == nil } ?? false }
        if !noEnqueued.isEmpty {
            notes.append("\(list(noEnqueued)): no enqueued count (swiftpush enqueue and the Python Producer keep one, plain XADD producers do not): what remains and the time left are unknown")
        }
        if let name = focus.campaign, !readable.contains(where: { $0.stats?.campaigns[name] != nil }) {
            notes.append("campaign \(name): nothing recorded in the shards shown")
        }
        return notes
    }
}
