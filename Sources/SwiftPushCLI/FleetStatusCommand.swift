#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import SwiftPushStatus
import SwiftPushWorker

/// `swiftpush status`: the fleet's progress from Redis alone (no worker needs to be reachable):
/// per shard, app and campaign, what waits, what is in flight, the outcomes so far, the rate and
/// the time left. (Named for the fleet: `StatusCommand` is the protocol of commands that
/// return an exit status.)
struct FleetStatusCommand: StatusCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show the fleet's progress: per shard, app and campaign, from Redis alone.",
        usage: "swiftpush status [--redis HOST:PORT | --cluster SEEDS] [--shard S | --shards A,B] [--campaign NAME] [--watch] [--json]",
        discussion: """
        Reads push:{s}'s consumer group, delayed:{s}, unregistered:{s}, outcomes:{s},
        the workers' counters stats:{s} and heartbeats workers:{s} (docs/worker.md, "Status").
        Without --shard or --shards, every shard with a push:{s} stream (SCAN: on a big
        database, name the shards). Figures are in notifications; Redis's queue is
        also shown in stream entries, labelled so. The rate is the growth of what is
        done between two reads --interval apart, so a single status takes that long.
        On a terminal --watch redraws in place with a progress bar; in a pipe it prints
        plain lines (or, with --json, one JSON object per read).
        Exit status: 0 read, 1 Redis or a shard could not be read, 2 usage error.
        """)

    @OptionGroup var redisOptions: RedisOptions
    @Option(help: ArgumentHelp("these shards only, comma-separated (an unknown one says so and names the known ones)", valueName: "A,B"))
    var shards: String?
    @Option(help: ArgumentHelp("the consumer group (default senders)", valueName: "NAME"))
    var group = "senders"
    @Option(help: ArgumentHelp("one campaign's figures (an unknown one says so and names the known ones)", valueName: "NAME"))
    var campaign: String?
    @Flag(help: "read again every --interval and redraw (Ctrl-C stops)")
    var watch = false
    @Flag(help: "one JSON object (per read with --watch)")
    var json = false
    @Option(help: ArgumentHelp("seconds between reads (default 1; 0: one read, no rate)", valueName: "S"))
    var interval: Double = 1
    @Option(help: ArgumentHelp("with --watch, stop after N reads", valueName: "N"))
    var count: Int?

    func validate() throws(ValidationError) {
        guard interval >= 0, interval <= 3600, interval.isFinite else {
            throw ValidationError("--interval needs seconds in 0...3600, got '\(interval)'")
        }
        if watch && interval == 0 { throw ValidationError("--watch needs an --interval above 0") }
        if shards != nil && redisOptions.shard != nil { throw ValidationError("give --shard or --shards, not both") }
        if let shards, Self.list(shards).isEmpty { throw ValidationError("--shards needs shard names, got '\(shards)'") }
        try checkRange(count, "count", 1...Int.max)
    }

    func execute() throws(ValidationError) -> Int32 {
        let (connection, _) = try redisOptions.connect()
        let options = redisOptions
        let selection: ShardSelection = shards.map { .listed(Self.list($0)) }
            ?? redisOptions.shard.map { .listed([$0]) } ?? .discovered(including: [], rescanMillis: 60_000)
        // A rate is measured over the reads of the last 10 s (docs/worker.md, "Status"); reads
        // asked for further apart than that measure over their own interval instead of none.
        let rates = RateTracker(windowMillis: max(10_000, Int(interval * 1500)))
        let reader = StatusReader(group: group, shards: selection, rates: rates, store: connection) { try options.connect().0 }
        // The shards asked for by name are the view's too: one with no key is said to be unknown.
        let listed: [String]? = if case .listed(let names) = selection { names } else { nil }
        let focus = StatusFocus(campaign: campaign, shards: listed)
        let terminal = isatty(1) == 1
        let redisName = (try? redisOptions.configuration())?.summary ?? "Redis"
        var drawn = 0
        var reads = 0
        var snapshot = reader.read()
        if !watch && interval > 0 {
            pause()
            snapshot = reader.read()
        }
        while true {
            let view = FleetStatus(snapshot, focus: focus)
            reads += 1
            if json {
                Console.out(view.json())
            } else if terminal {
                let lines = StatusText.lines(view, redis: redisName, style: .init(bar: true, width: Self.terminalWidth() - 1))
                // Up over the previous frame and clear below it: the new one replaces it in place.
                let back = drawn > 0 ? "\u{1B}[\(drawn)A\r\u{1B}[J" : ""
                Console.out(back + lines.joined(separator: "\n"))
                drawn = lines.count
            } else {
                Console.out(StatusText.lines(view, redis: redisName, style: .plain).joined(separator: "\n") + (watch ? "\n" : ""))
            }
            guard watch, reads < (count ?? Int.max) else { break }
            pause()
            snapshot = reader.read()
        }
        if let error = snapshot.error { Console.err("swiftpush status: \(error)") }
        return snapshot.error == nil ? 0 : 1
    }

    /// Waits `--interval` seconds.
    private func pause() {
        var left = timespec(tv_sec: Int(interval), tv_nsec: Int((interval - interval.rounded(.down)) * 1e9))
        var asked = left
        while nanosleep(&asked, &left) != 0 && errno == EINTR { asked = left }
    }

    /// Shard names of a comma-separated list.
    static func list(_ text: String) -> [String] { text.split(separator: ",").map(String.init) }

    /// The terminal's width (80 when it does not say).
    static func terminalWidth() -> Int {
        var size = winsize()
        return ioctl(1, UInt(TIOCGWINSZ), &size) == 0 && size.ws_col > 0 ? Int(size.ws_col) : 80
    }
}
