/// When re-delivered entries ("suspects": their previous holder ended without an outcome — it
/// died, was killed or stopped) may be sent again. Pure: the caller passes the time, so each
/// rule has a unit test.
///
/// Per app, suspects go out in groups of 1, 1, 2, 4, 8, ... (up to `maxGroup`), the
/// least-delivered first, and a group goes only when the one before it has all its answers or
/// has been out for `groupWaitNanos`. The worker counts a delivery just before a group is sent
/// (`WorkQueue.countDelivery`), so only a delivery that reached a send is counted; of those,
/// the ones that count toward `max_deliveries` are the ones a request was written in
/// (`DeliveryCharge`), and "least delivered" means least of those, then least of all.
/// Least-delivered first makes a crash loop that is not the entries' fault
/// progress over all of them: what a life sent before it died goes behind what it did not, so
/// the next life sends other entries and the counts spread (issue 31: most-delivered first sent
/// the same head entry in every life of a worker killed every 1.2 s with answers 1 s late, and
/// dead-lettered it after `max_deliveries` lives, 11 of 600 in a minute). An entry whose next
/// send would be its last allowed one (`lastChance`) goes alone: an entry that kills its worker
/// rises with the few sent beside it until they reach their last chance, then each of those
/// goes alone, the healthy ones are answered, and the poison one is the one dead-lettered.
struct SuspectPacer {
    /// The largest group (the worker's batch).
    let maxGroup: Int
    /// How long a group may wait for its answers before the next one goes anyway (a suspect
    /// APNs never answers must not hold the others back for its whole deadline).
    let groupWaitNanos: UInt64
    /// Deliveries at and above which a suspect is sent alone (its next send is its last allowed
    /// one: `max_deliveries - 1`).
    let lastChance: Int

    private struct Waiting {
        let tag: UInt64
        /// Deliveries that count toward `max_deliveries` (`DeliveryCharge`), then all of them.
        let deliveries: Int
        let all: Int
        let order: Int
    }

    private struct AppState {
        var waiting: [Waiting] = []
        var sorted = true
        var outstanding = Set<UInt64>()
        /// Groups sent in this wave (it sets the next one's size).
        var groupsSent = 0
        var groupSentNanos: UInt64 = 0
    }

    private var apps: [String: AppState] = [:]
    private var arrivals = 0
    /// Suspects sent and not answered yet, over every app (0: results need not be looked up here).
    private(set) var outstandingCount = 0

    init(maxGroup: Int, groupWaitNanos: UInt64 = 1_000_000_000, lastChance: Int = .max) {
        self.maxGroup = max(1, maxGroup)
        self.groupWaitNanos = groupWaitNanos
        self.lastChance = lastChance
    }

    /// Suspects waiting to be sent, over every app.
    var waitingCount: Int { apps.values.reduce(0) { $0 + $1.waiting.count } }

    /// When the next group may go without an answer (a group out past `groupWaitNanos`), if
    /// one waits behind a group in flight; a group with none in flight goes at once.
    var nextGroupNanos: UInt64? {
        apps.values.filter { !$0.waiting.isEmpty && !$0.outstanding.isEmpty }.map { $0.groupSentNanos &+ groupWaitNanos }.min()
    }

    /// Adds a suspect of `app` (held under `tag`) delivered `deliveries` times so far (all of
    /// them counting toward `max_deliveries`).
    mutating func add(tag: UInt64, app: String, deliveries: Int) {
        add(tag: tag, app: app, count: (deliveries, deliveries))
    }

    /// Adds a suspect of `app` (held under `tag`) whose deliveries so far are `count`: those
    /// that count toward `max_deliveries` (`DeliveryCharge`), and all of them.
    mutating func add(tag: UInt64, app: String, count: (charged: Int, all: Int)) {
        arrivals += 1
        var s = apps[app] ?? AppState()
        // A new wave after the last one is done (a later reclaim) starts from one again.
        if s.waiting.isEmpty && s.outstanding.isEmpty { s.groupsSent = 0 }
        s.waiting.append(Waiting(tag: tag, deliveries: count.charged, all: count.all, order: arrivals))
        s.sorted = false
        apps[app] = s
    }

    /// The groups that may be sent now, one per app at most; each is outstanding from now on.
    mutating func nextGroups(now: UInt64) -> [(app: String, tags: [UInt64])] {
        var groups: [(app: String, tags: [UInt64])] = []
        for app in apps.keys.sorted() {
            var s = apps[app]!
            guard !s.waiting.isEmpty, s.outstanding.isEmpty || now &- s.groupSentNanos >= groupWaitNanos else { continue }
            if !s.sorted {
                // Least delivered first (what an earlier life sent goes behind what it did not; of
                // those equal in counted deliveries, the least delivered in all), then as they came.
                s.waiting.sort { ($0.deliveries, $0.all, $0.order) < ($1.deliveries, $1.all, $1.order) }
                s.sorted = true
            }
            // 1, 1, 2, 4, ...: each as large as the ones before it together.
            let size = s.groupsSent < 2 ? 1 : min(1 << min(s.groupsSent - 1, 30), maxGroup)
            // An entry on its last chance goes alone (sorted: those after it are on theirs too).
            let lastChanceAt = s.waiting.prefix(size).firstIndex { $0.deliveries >= lastChance } ?? size
            let group = s.waiting.prefix(max(1, lastChanceAt)).map(\.tag)
            s.waiting.removeFirst(group.count)
            outstandingCount += group.count - s.outstanding.count
            s.outstanding = Set(group)
            s.groupSentNanos = now
            s.groupsSent += 1
            apps[app] = s
            groups.append((app, group))
        }
        return groups
    }

    /// A group could not be sent after all (the queue failed): its suspects wait again.
    mutating func putBack(app: String, tags: [UInt64], deliveries: (UInt64) -> (charged: Int, all: Int)) {
        guard var s = apps[app] else { return }
        for tag in tags where s.outstanding.remove(tag) != nil {
            outstandingCount -= 1
            let count = deliveries(tag)
            s.waiting.append(Waiting(tag: tag, deliveries: count.charged, all: count.all, order: 0))
        }
        s.sorted = false
        apps[app] = s
    }

    /// A result came for `tag` (an answer, or the end of its send): it no longer holds its
    /// group back.
    mutating func answered(tag: UInt64, app: String) {
        if apps[app]?.outstanding.remove(tag) != nil { outstandingCount -= 1 }
    }

    /// Every suspect still waiting, out of the pacing: the worker is stopping (those before its
    /// drain time are sent at once, those after it left pending and handed back).
    mutating func takeAllWaiting() -> [UInt64] {
        var all: [UInt64] = []
        for app in apps.keys {
            all += apps[app]!.waiting.map(\.tag)
            apps[app]!.waiting.removeAll()
        }
        return all
    }
}
