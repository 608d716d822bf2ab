import SwiftPushKeys

/// A worker's copy of its shard's campaign controls (`campaign:{s}:<name>` of every name in
/// `campaigns:{s}`), read again every `refreshNanos`: one script call per shard, whatever the
/// number of campaigns, so that a cancel reaches every worker within a second
/// (docs/worker.md, "Steering a campaign").
struct CampaignBoard {
    /// The controls as last read.
    private(set) var controls: [String: CampaignControl] = [:]
    /// Whether a read has come back since the machine started: until then it takes nothing in
    /// (a worker restarted during a cancel must not send what it takes back).
    private(set) var loaded = false
    /// When the next read may go, and whether one is in flight.
    var nextReadNanos: UInt64 = 0
    var reading = false
    /// Throttled campaigns' entries held for budget (serials, in order), their notifications
    /// waiting, when each campaign may ask for budget next, and until when entries set aside in
    /// the delayed set are due (`ShardMachine+Throttle`).
    var waiting: [String: [UInt64]] = [:]
    var waitingNotes: [String: Int] = [:]
    var nextAskNanos: [String: UInt64] = [:]
    var deferredUntilMillis: [String: Int64] = [:]
    /// Entries of throttled campaigns whose every notification was given to the client, until
    /// they are settled: their notifications in flight count against the next ask.
    var released: [String: Set<UInt64>] = [:]
    /// The wall clock at the machine's last step (UNIX ms), for due times set at intake, and the
    /// monotonic one (ns), for the wake-ups that promote what is set aside when it is due.
    var wallMillis: Int64 = 0
    var stepNanos: UInt64 = 0
    /// How often the controls are read: a quarter of the second a cancel has to reach the fleet.
    static let refreshNanos: UInt64 = 250_000_000

    /// What to do with an entry of `campaign`.
    func decision(_ campaign: String) -> CampaignDecision { CampaignDecision.of(campaign: campaign, controls) }

    /// Takes the controls just read; returns one log line per campaign whose control changed
    /// (or appeared, unless it is active and unthrottled), so that each worker logs every
    /// control action it applies, once.
    mutating func update(_ fresh: [String: CampaignControl]) -> [WorkerLogLine] {
        var lines: [WorkerLogLine] = []
        for name in fresh.keys.sorted() {
            let c = fresh[name]!
            let before = controls[name] ?? CampaignControl()
            guard c.state != before.state || c.rate != before.rate else { continue }
            var fields = ["campaign": name, "state": c.state.rawValue]
            fields["rate"] = c.rate.map { CampaignControl.text($0) } ?? "none"
            lines.append(WorkerLogLine(.info, "campaign control applied", fields))
        }
        controls = fresh
        loaded = true
        return lines
    }
}
