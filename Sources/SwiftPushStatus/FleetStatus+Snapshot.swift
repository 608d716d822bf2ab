/// Building a view: the snapshot's readings seen through a focus, added up.
extension FleetStatus {
    /// The latest 410s shown.
    static let recentUnregisteredShown = 10

    /// `snapshot` seen through `focus`: the shards it names (a shard not read is empty), the
    /// whole fleet or one campaign. A campaign's figures come from the shards that hold it only:
    /// one that never saw it adds nothing, not even an unknown rate that would blank the sum
    /// (issue 35); a campaign no shard holds is unknown, its figures null.
    public init(_ snapshot: StatusSnapshot, focus: StatusFocus = StatusFocus()) {
        let scope = focus.scope
        let now = snapshot.timeMillis
        let shown = focus.shards.map { names in
            ShardSelection.ordered(names).map { name in
                snapshot.readings.first { $0.shard == name } ?? ShardReading(shard: name, timeMillis: snapshot.timeMillis)
            }
        } ?? snapshot.readings
        let readable = shown.filter { $0.error == nil }
        func rate(_ r: ShardReading, _ scope: StatusScope) -> Double? {
            snapshot.rate(RateKey(shard: r.shard, scope: scope, unit: r.unit))
        }
        /// The progress of `scope` over the shards that hold it; all unknown when none does.
        func progress(_ scope: StatusScope, _ holding: [ShardReading]) -> ProgressFigures {
            if holding.isEmpty && scope != .all { return ProgressFigures(unit: .notifications, done: nil, remaining: nil, rate: nil) }
            return ProgressFigures.sum(holding.map {
                ProgressFigures(unit: $0.unit, done: $0.done(scope), remaining: $0.remaining(scope), rate: rate($0, scope))
            })
        }
        func sum(_ values: [Int?]) -> Int? { values.reduce(Optional(0)) { a, b in a.flatMap { x in b.map { x + $0 } } } }

        timeMillis = snapshot.timeMillis
        group = snapshot.group
        campaign = focus.campaign
        shards = shown.map { ShardStatus($0, scope: scope, rate: rate($0, scope), now: now) }

        let holding = readable.filter { $0.holds(scope) }
        let counted = holding.compactMap { $0.counts(scope) }
        let byUnit = [CountUnit.notifications, .entries].compactMap { unit in
            let same = holding.filter { $0.unit == unit }
            return same.isEmpty ? nil : progress(scope, same)
        }
        let queued = sum(readable.map { r in r.waiting.map { $0 + r.pending + r.delayed } })
        let state: ProgressState
        if scope != .all {
            state = holding.isEmpty ? .unknown : .of(progress(scope, holding), queuedEntries: 0)
        } else if focus.shards != nil && !readable.isEmpty && !readable.contains(where: \.known) {
            state = .unknown
        } else {
            let states = byUnit.map { ProgressState.of($0, queuedEntries: queued) }
            state = states.contains(.working) || (queued ?? 0) > 0 ? .working : states.contains(.done) ? .done : .idle
        }
        let notifying = readable.filter(\.counted)
        fleet = FleetSummary(
            shards: readable.count,
            state: state,
            waitingNotifications: scope == .all && !notifying.isEmpty ? sum(notifying.map { $0.waitingNotifications(at: now) }) : nil,
            inFlightNotifications: scope == .all ? sum(readable.map { $0.inFlightNotifications(at: now) }) : nil,
            waitingEntries: sum(readable.map(\.waiting)),
            pendingEntries: readable.reduce(0) { $0 + $1.pending },
            delayedEntries: readable.reduce(0) { $0 + $1.delayed },
            unregisteredNotifications: scope == .all ? readable.reduce(0) { $0 + $1.unregistered } : counted.reduce(0) { $0 + $1.gone },
            outcomes: counted.isEmpty ? nil : counted.dropFirst().reduce(counted[0], +),
            progress: progress(scope, holding),
            progressByUnit: byUnit)

        func scopes(_ names: Set<String>, _ make: (String) -> StatusScope) -> [ScopeStatus] {
            names.sorted().map { name in
                let scope = make(name)
                let holding = readable.filter { $0.holds(scope) }
                let counts = holding.compactMap { $0.counts(scope) }
                let figures = progress(scope, holding)
                var s = ScopeStatus(name: name, state: holding.isEmpty ? .unknown : .of(figures, queuedEntries: 0),
                                    outcomes: counts.dropFirst().reduce(counts.first ?? OutcomeCounts(), +), progress: figures)
                if case .campaign = scope {
                    let controls = readable.compactMap { $0.controls[name] }
                    let states = Set(controls.map(\.state))
                    s.control = states.contains(.cancelled) ? "cancelled" : states.contains(.paused) ? "paused" : "active"
                    let rates = controls.compactMap(\.rate)
                    s.rateLimit = rates.isEmpty ? nil : rates.reduce(0, +)
                }
                return s
            }
        }
        let knownCampaigns = Set(readable.flatMap { $0.stats?.campaigns.keys.map { $0 } ?? [] })
        if let name = focus.campaign {
            apps = []
            campaigns = scopes([name]) { .campaign($0) }
            recentUnregistered = []
        } else {
            apps = scopes(Set(readable.flatMap { $0.stats?.apps.keys.map { $0 } ?? [] })) { .app($0) }
            campaigns = scopes(knownCampaigns) { .campaign($0) }
            recentUnregistered = Array(readable.flatMap(\.recentUnregistered)
                .sorted { $0.timeMillis > $1.timeMillis }.prefix(Self.recentUnregisteredShown))
        }
        workers = WorkerStatus.merged(readable, at: snapshot.timeMillis)

        // The chart: the focus's rate in its main unit (notifications where any shard counts).
        let names = Set(holding.map(\.shard))
        let unit: CountUnit = holding.contains(where: \.counted) || scope != .all ? .notifications : .entries
        rateHistory = RateHistory.of(snapshot.history, unit: unit, gapMillis: snapshot.rateWindowMillis) {
            names.contains($0.shard) && $0.scope == scope && $0.unit == unit
        }
        notes = Self.notes(shown: shown, readable: readable, focus: focus, knownShards: snapshot.knownShards,
                           knownCampaigns: knownCampaigns.sorted())
        error = snapshot.error
    }

    /// What the figures cannot say, and why (one line each).
    private static func notes(shown: [ShardReading], readable: [ShardReading], focus: StatusFocus,
                              knownShards: [String]?, knownCampaigns: [String]) -> [String] {
        var notes: [String] = []
        if shown.isEmpty { notes.append("no shard found (no push:{s} stream): name them with --shards") }
        func list(_ rs: [ShardReading]) -> String { (rs.count == 1 ? "shard " : "shards ") + rs.map(\.shard).joined(separator: ", ") }
        func names(_ all: [String]) -> String { all.isEmpty ? "none" : all.joined(separator: ", ") }
        let unknown = readable.filter { !$0.known }
        if focus.shards != nil, !unknown.isEmpty {
            notes.append("\(list(unknown)) unknown: no key of \(unknown.count == 1 ? "it" : "them") in Redis"
                         + (knownShards.map { "; known shards: \(names($0))" } ?? ""))
        }
        if let name = focus.campaign, !readable.contains(where: { $0.holds(.campaign(name)) }) {
            notes.append("campaign \(name) unknown: no shard shown counts it; known campaigns: \(names(knownCampaigns))")
        }
        let uncounted = readable.filter { !$0.counted && ($0.streamExists || $0.outcomeRecords > 0) }
        if !uncounted.isEmpty {
            notes.append("\(list(uncounted)): no stats:{s}, the workers there count no outcomes in Redis: progress is in stream entries from the consumer group; outcomes by reason, app and campaign are not known")
        }
        let unknownLag = readable.filter { $0.waiting == nil }
        if !unknownLag.isEmpty {
            notes.append("\(list(unknownLag)): Redis cannot tell the group's lag (entries deleted or the group moved): waiting entries and time left unknown")
        }
        let noEnqueued = readable.filter { $0.holds(focus.scope) && ($0.counts(focus.scope).map { $0.enqueued == nil } ?? false) }
        if !noEnqueued.isEmpty {
            notes.append("\(list(noEnqueued)): no enqueued count (swiftpush enqueue and the Python Producer keep one, plain XADD producers do not): what remains and the time left are unknown")
        }
        return notes
    }
}
