/// Reads the fleet's status from Redis alone (no worker needs to be reachable): each shard's
/// keys in one round trip, the rates measured across reads. One reader serves `swiftpush
/// status` and the worker's status page.
///
/// Not thread-safe: one owner calls `read` (the command's loop, the page's feed thread).
/// A lost connection is dropped and made again on the next read.
public final class StatusReader {
    /// The consumer group whose progress is read.
    public let group: String
    /// Reads kept for the rate chart.
    public var historyLength = 120
    private let selection: ShardSelection
    private let connect: () throws -> any StatusStore
    private let clockOffsetMillis: () -> Int
    private var store: (any StatusStore)?
    private var tracker: RateTracker
    private var history: [StatusSnapshot.Tick] = []
    private var discovered: [String] = []
    private var discoveredAt: Int?
    private var lastTime = 0

    /// A reader of `group` on the shards `shards`, connecting with `connect` when it has no
    /// connection (`store`, if given, is used first).
    ///
    /// `clockOffsetMillis` is added to Redis's time at each read: 0 but in tests, which move the
    /// clock forward (a pause of the reads, as when nobody looks at the page) without waiting.
    public init(group: String, shards: ShardSelection, rates: RateTracker = RateTracker(),
                store: (any StatusStore)? = nil, clockOffsetMillis: @escaping () -> Int = { 0 },
                connect: @escaping () throws -> any StatusStore) {
        self.group = group
        self.selection = shards
        self.tracker = rates
        self.store = store
        self.clockOffsetMillis = clockOffsetMillis
        self.connect = connect
    }

    /// One read of every shard. Never throws: what could not be read is said in the snapshot
    /// (`error`, or a shard's reading's `error`).
    public func read() -> StatusSnapshot {
        let store: any StatusStore
        do {
            store = try self.store ?? connect()
            self.store = store
        } catch {
            return StatusSnapshot(group: group, timeMillis: 0, readings: [], history: history, error: "\(error)")
        }
        var problems: [String] = []
        var didDiscover = false
        // Looks for every shard's stream, at most once per `rescanMillis`.
        // A failure is a problem only where the shards to read depend on it.
        func discover(_ rescanMillis: Int, reporting: Bool = true) {
            guard discoveredAt.map({ lastTime - $0 >= rescanMillis }) ?? true else { return }
            do {
                discovered = try store.keys(matching: "push:{*}", type: "stream").compactMap(StatusKeys.shard(ofStream:))
                didDiscover = true
            } catch {
                if reporting { problems.append("looking for shards: \(error)") }
                if !(error is StatusReadError) { self.store = nil }
            }
        }
        let shards: [String]
        switch selection {
        case .listed(let names):
            shards = ShardSelection.ordered(names)
        case .discovered(let including, let rescanMillis):
            discover(rescanMillis)
            shards = ShardSelection.ordered(including + discovered)
        }
        var readings: [ShardReading] = []
        for shard in shards {
            let keys = StatusKeys(shard: shard)
            guard let live = self.store else {
                readings.append(ShardReading(shard: shard, timeMillis: lastTime, error: "not connected to Redis"))
                continue
            }
            do {
                let replies = try live.pipeline(ShardReading.commands(keys, group: group), routedBy: keys.stream.stream)
                readings.append(try ShardReading(keys: keys, group: group, replies: replies))
            } catch let error as StatusReadError {
                readings.append(ShardReading(shard: shard, timeMillis: lastTime, error: error.description))
            } catch {
                readings.append(ShardReading(shard: shard, timeMillis: lastTime, error: "\(error)"))
                self.store = nil
            }
        }
        let offset = clockOffsetMillis()
        for i in readings.indices where readings[i].error == nil { readings[i].timeMillis += offset }
        let time = readings.filter { $0.error == nil }.map(\.timeMillis).max() ?? lastTime
        lastTime = time
        if didDiscover { discoveredAt = time }
        // An unknown shard asked for by name: the known ones are named beside it.
        var knownShards: [String]?
        if case .discovered = selection { knownShards = discovered }
        if case .listed = selection, readings.contains(where: { $0.error == nil && !$0.known }), self.store != nil {
            discover(60_000, reporting: false)
            if didDiscover { discoveredAt = time }
            knownShards = discoveredAt == nil ? nil : discovered
        }
        record(readings, at: time)
        let failed = readings.filter { $0.error != nil }.map(\.shard)
        if !failed.isEmpty { problems.append("shard\(failed.count == 1 ? "" : "s") \(failed.joined(separator: ", ")) could not be read") }
        var snapshot = StatusSnapshot(group: group, timeMillis: time, readings: readings, history: history,
                                      error: problems.isEmpty ? nil : problems.joined(separator: "; "))
        snapshot.knownShards = knownShards.map { ShardSelection.ordered($0) }
        snapshot.rateWindowMillis = tracker.windowMillis
        return snapshot
    }

    /// Feeds the rate tracker every scope's count and keeps this read's rates.
    private func record(_ readings: [ShardReading], at time: Int) {
        var samples: [RateKey: (time: Int, done: Int)] = [:]
        for r in readings {
            for scope in r.scopes {
                if let done = r.done(scope) { samples[RateKey(shard: r.shard, scope: scope, unit: r.unit)] = (r.timeMillis, done) }
            }
        }
        tracker.record(samples)
        var rates: [RateKey: Double] = [:]
        for key in samples.keys { if let rate = tracker.rate(key) { rates[key] = rate } }
        history.append(StatusSnapshot.Tick(timeMillis: time, rates: rates, sampled: Set(samples.keys)))
        if history.count > historyLength { history.removeFirst(history.count - historyLength) }
    }
}
