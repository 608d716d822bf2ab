/// A shard's progress in one scope, from what was read (docs/worker.md, "Status"): with
/// `stats:{s}` in notifications (done = accepted + rejected + failed; remaining = enqueued −
/// done where producers count), otherwise in entries from the consumer group (done = entries
/// read − pending − delayed; remaining = waiting + pending + delayed).
extension ShardReading {
    /// Whether the workers count outcomes here (`stats:{s}` exists).
    public var counted: Bool { stats != nil }

    /// The unit of `done` and `remaining`.
    public var unit: CountUnit { counted ? .notifications : .entries }

    /// Entries delivered to a worker and not settled.
    public var pending: Int { group?.pending ?? 0 }

    /// Entries not yet delivered to any worker: the group's lag; before any group exists, the
    /// whole stream; where workers delete settled entries (they count, too), the stream's length
    /// less what is pending when Redis cannot tell the lag. Nil when unknown.
    public var waiting: Int? {
        if !streamExists { return 0 }
        guard let group else { return streamLength }
        if let lag = group.lag { return lag }
        return counted ? max(0, streamLength - group.pending) : nil
    }

    /// The outcome counts of `scope`; nil where nothing is counted. An app or campaign this
    /// shard never saw counts zero (and zero enqueued, where producers count).
    public func counts(_ scope: StatusScope) -> OutcomeCounts? {
        guard let stats, error == nil else { return nil }
        var none = OutcomeCounts()
        none.enqueued = stats.total.enqueued == nil ? nil : 0
        switch scope {
        case .all: return stats.total
        case .app(let name): return stats.apps[name] ?? none
        case .campaign(let name): return stats.campaigns[name] ?? none
        }
    }

    /// How many have an outcome, in `unit`; nil when that cannot be told (per app or campaign
    /// without counters; Redis not knowing the group's entries read).
    public func done(_ scope: StatusScope) -> Int? {
        guard error == nil else { return nil }
        if let counts = counts(scope) { return counts.done }
        guard scope == .all else { return nil }
        guard let group else { return 0 }
        return group.entriesRead.map { max(0, $0 - group.pending - delayed) }
    }

    /// How many are still to settle, in `unit`; nil when that cannot be told (counters without
    /// producers that count `enqueued`; an unknown lag).
    public func remaining(_ scope: StatusScope) -> Int? {
        guard error == nil else { return nil }
        if let counts = counts(scope) { return counts.enqueued.map { max(0, $0 - counts.done) } }
        guard scope == .all else { return nil }
        return waiting.map { $0 + pending + delayed }
    }

    /// Whether any of the shard's keys exists: a shard with none is unknown (a misspelt name),
    /// not an empty shard.
    public var known: Bool { streamExists || stats != nil || unregistered > 0 || outcomeRecords > 0 }

    /// Whether `scope` has figures here: the shard itself, or an app or campaign its counters
    /// name. A shard that never saw a campaign adds nothing to it (not even an unknown rate).
    public func holds(_ scope: StatusScope) -> Bool {
        switch scope {
        case .all: return true
        case .app(let name): return stats?.apps[name] != nil
        case .campaign(let name): return stats?.campaigns[name] != nil
        }
    }

    /// Notifications the shard's workers hold in flight, from their heartbeats of this shard
    /// that are not stale at `now` (a stale one's figure is not current); nil without a fresh
    /// heartbeat while entries are pending (someone holds them, nobody says how many
    /// notifications they carry).
    public func inFlightNotifications(at now: Int) -> Int? {
        let fresh = heartbeats.filter { h in h.heartbeatMillis.map { now - $0 <= WorkerStatus.staleMillis } ?? false }
        let figures = fresh.compactMap(\.inFlight)
        if figures.isEmpty { return pending == 0 ? 0 : nil }
        return figures.reduce(0, +)
    }

    /// Notifications enqueued and neither settled nor in flight (delayed ones included): what
    /// remains less what the workers hold; nil where either is unknown or nothing is counted.
    public func waitingNotifications(at now: Int) -> Int? {
        guard counted, let remaining = remaining(.all), let inFlight = inFlightNotifications(at: now) else { return nil }
        return max(0, remaining - inFlight)
    }

    /// Every scope with figures in this reading: the shard, then each counted app and campaign.
    var scopes: [StatusScope] {
        guard let stats, error == nil else { return error == nil ? [.all] : [] }
        return [.all] + stats.apps.keys.sorted().map { .app($0) } + stats.campaigns.keys.sorted().map { .campaign($0) }
    }
}
