/// When re-delivered entries ("suspects": their previous holder ended without an outcome — it
/// died, was killed or stopped) may be sent again. Pure: the caller passes the time, so each
/// rule has a unit test.
///
/// Per app, suspects go out in groups of 1, 1, 2, 4, 8, ... (up to `maxGroup`), the
/// most-delivered first, and a group goes only when the one before it has all its answers or
/// has been out for `groupWaitNanos`. Each group is as large as all the groups before it
/// together, so the next life of a worker that died with group k in flight has sent every entry
/// of that group again, in groups 1 to k, before its own group k goes: with plain doubling
/// (1, 2, 4, ...) one entry of it was always left over for the group in flight at the next death,
/// and in a steady crash loop its count rose at every restart. The worker counts a delivery just before a group is
/// sent (`WorkQueue.countDelivery`), so a delivery counts toward `max_deliveries` only when it
/// reached a send. An entry that kills its worker is then sent with fewer and fewer others at
/// each restart and alone once its count leads, and is the one dead-lettered; a crash loop that
/// is not the entries' fault (a worker killed every half second, answers 300 ms late) raises
/// the count of at most a few entries per restart instead of every entry it held.
struct SuspectPacer {
    /// The largest group (the worker's batch).
    let maxGroup: Int
    /// How long a group may wait for its answers before the next one goes anyway (a suspect
    /// APNs never answers must not hold the others back for its whole deadline).
    let groupWaitNanos: UInt64

    private struct Waiting {
        let tag: UInt64
        let deliveries: Int
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

    init(maxGroup: Int, groupWaitNanos: UInt64 = 1_000_000_000) {
        self.maxGroup = max(1, maxGroup)
        self.groupWaitNanos = groupWaitNanos
    }

    /// Suspects waiting to be sent, over every app.
    var waitingCount: Int { apps.values.reduce(0) { $0 + $1.waiting.count } }

    /// When the next group may go without an answer (a group out past `groupWaitNanos`), if
    /// one waits behind a group in flight; a group with none in flight goes at once.
    var nextGroupNanos: UInt64? {
        apps.values.filter { !$0.waiting.isEmpty && !$0.outstanding.isEmpty }.map { $0.groupSentNanos &+ groupWaitNanos }.min()
    }

    /// Adds a suspect of `app` (held under `tag`) delivered `deliveries` times so far.
    mutating func add(tag: UInt64, app: String, deliveries: Int) {
        arrivals += 1
        var s = apps[app] ?? AppState()
        // A new wave after the last one is done (a later reclaim) starts from one again.
        if s.waiting.isEmpty && s.outstanding.isEmpty { s.groupsSent = 0 }
        s.waiting.append(Waiting(tag: tag, deliveries: deliveries, order: arrivals))
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
                // Most delivered first (an entry that keeps killing its worker leads), then as they came.
                s.waiting.sort { ($0.deliveries, -$0.order) > ($1.deliveries, -$1.order) }
                s.sorted = true
            }
            // 1, 1, 2, 4, ...: each as large as the ones before it together.
            let size = s.groupsSent < 2 ? 1 : min(1 << min(s.groupsSent - 1, 30), maxGroup)
            let group = s.waiting.prefix(size).map(\.tag)
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
    mutating func putBack(app: String, tags: [UInt64], deliveries: (UInt64) -> Int) {
        guard var s = apps[app] else { return }
        for tag in tags where s.outstanding.remove(tag) != nil {
            outstandingCount -= 1
            s.waiting.append(Waiting(tag: tag, deliveries: deliveries(tag), order: 0))
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
