#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import SwiftPushRedis
import SwiftPushStatus
import SwiftPushWorker
import SwiftPushKeys

/// `swiftpush campaign`: steer a campaign across the fleet (docs/worker.md, "Steering a
/// campaign"). The control state lives in Redis next to each shard's stream, so every worker
/// (and every restarted one) reads it; the subcommands write or read it on every shard.
struct CampaignCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "campaign",
        abstract: "Cancel, pause, resume or throttle a campaign, or list and show them, on every shard.",
        usage: "swiftpush campaign <cancel|pause|resume|throttle|list|show> [NAME [RATE]] [--redis HOST:PORT | --cluster SEEDS] [--shards A,B]",
        discussion: """
        A campaign is the `campaign` field of its entries. cancel: every notification of it
        not yet sent gets REJECTED Cancelled (workers apply it within a second); pause: its
        entries are moved aside as workers read them, without holding up other campaigns;
        resume: they go back into the stream; throttle NAME RATE: the fleet sends it at most
        RATE notifications/s (off: no limit). Each writes campaign:{s}:NAME and campaigns:{s}
        on every shard. An unknown campaign (no control, counter or paused entry on any
        shard), a cancel of a finished or cancelled one, a resume of one not paused: an
        error, nothing written. Exit status: 0 done, 1 refused or Redis failed, 2 usage error.
        """,
        subcommands: [Cancel.self, Pause.self, Resume.self, Throttle.self, List.self, Show.self])

    /// The options every subcommand takes: Redis, and which shards.
    struct Target: ParsableArguments {
        @OptionGroup var redisOptions: RedisOptions
        @Option(help: ArgumentHelp("these shards only, comma-separated (default: every shard with a stream or a control)", valueName: "A,B"))
        var shards: String?

        func validate() throws(ValidationError) {
            if shards != nil && redisOptions.shard != nil { throw ValidationError("give --shard or --shards, not both") }
            if let shards, shards.split(separator: ",").isEmpty { throw ValidationError("--shards needs shard names, got '\(shards)'") }
        }

        /// The fleet the options name, read now.
        func fleet() throws(ValidationError) -> CampaignFleet {
            let (router, _) = try redisOptions.connect()
            let listed = shards.map { $0.split(separator: ",").map(String.init) } ?? redisOptions.shard.map { [$0] }
            do throws(RedisError) {
                return try CampaignFleet(router: router, shards: listed)
            } catch {
                throw ValidationError("reading the shards: \(error.description)")
            }
        }
    }

    /// A refusal: printed, exit status 1, nothing written.
    static func refuse(_ command: String, _ message: String) -> Int32 {
        Console.err("swiftpush campaign \(command): \(message)")
        return 1
    }

    /// The campaign `name`, or a refusal that says it is unknown.
    static func known(_ fleet: CampaignFleet, _ name: String, _ command: String) throws(ValidationError) -> CampaignFleet.Campaign? {
        let found: CampaignFleet.Campaign?
        do throws(RedisError) { found = try fleet.campaign(name) } catch { throw ValidationError("Redis: \(error.description)") }
        if found == nil {
            let shards = fleet.shards.isEmpty ? "no shard found" : "shards \(fleet.shards.joined(separator: ","))"
            _ = refuse(command, "unknown campaign '\(name)': no control, counter or paused entry of it on \(shards) (never enqueued, or by a producer that counts nothing?); nothing written")
        }
        return found
    }

    /// Writes `state` on every shard of the fleet (those without anything of the campaign too:
    /// its entries may land there), then moves its paused entries back into the streams when
    /// it is no longer paused. Returns the notifications moved back.
    static func apply(_ fleet: CampaignFleet, _ name: String, state: CampaignState) throws(ValidationError) -> Int {
        var moved = 0
        do throws(RedisError) {
            let now = CampaignCommand.nowMillis()
            for s in fleet.shards { try fleet.control(s).set(name, state: state, nowMillis: now) }
            guard state != .paused else { return 0 }
            for s in fleet.shards {
                while let m = try fleet.control(s).moveBack(name), m.entries > 0 { moved += m.notifications }
            }
        } catch {
            throw ValidationError("Redis: \(error.description)")
        }
        return moved
    }

    /// `swiftpush campaign cancel NAME`.
    struct Cancel: StatusCommand {
        static let configuration = CommandConfiguration(
            abstract: "Cancel a campaign: what is not sent yet gets REJECTED Cancelled, never sent.",
            discussion: """
            Workers apply it within a second; notifications already written to APNs keep their
            real outcome. A finished campaign (every notification its producers counted in
            stats:{s} has an outcome, none paused) cannot be cancelled: nothing of it is left.
            """)
        @OptionGroup var target: Target
        @Argument(help: "the campaign") var name: String

        func execute() throws(ValidationError) -> Int32 {
            let fleet = try target.fleet()
            guard let c = try CampaignCommand.known(fleet, name, "cancel") else { return 1 }
            if c.state == .cancelled { return CampaignCommand.refuse("cancel", "campaign '\(name)' is cancelled already; nothing written") }
            if c.finished == true, let counts = c.counts {
                return CampaignCommand.refuse("cancel", "campaign '\(name)' is finished: all \(counts.enqueued ?? 0) notifications its producers enqueued have their outcome (\(counts.accepted) accepted, \(counts.rejected) rejected, \(counts.failed) failed, in stats:{s}) and none is paused; nothing to cancel, nothing written")
            }
            let moved = try CampaignCommand.apply(fleet, name, state: .cancelled)
            Console.out("campaign \(name): cancelled on \(fleet.shards.count) shard(s)" + (moved > 0 ? "; \(moved) paused notification(s) handed back to be cancelled" : ""))
            return 0
        }
    }

    /// `swiftpush campaign pause NAME`.
    struct Pause: StatusCommand {
        static let configuration = CommandConfiguration(
            abstract: "Pause a campaign: its entries are moved aside as workers read them, until resume.")
        @OptionGroup var target: Target
        @Argument(help: "the campaign") var name: String

        func execute() throws(ValidationError) -> Int32 {
            let fleet = try target.fleet()
            guard let c = try CampaignCommand.known(fleet, name, "pause") else { return 1 }
            if c.state != .active { return CampaignCommand.refuse("pause", "campaign '\(name)' is \(c.state.rawValue), not active; nothing written") }
            if c.finished == true { return CampaignCommand.refuse("pause", "campaign '\(name)' is finished (every notification counted has its outcome); nothing written") }
            _ = try CampaignCommand.apply(fleet, name, state: .paused)
            Console.out("campaign \(name): paused on \(fleet.shards.count) shard(s)")
            return 0
        }
    }

    /// `swiftpush campaign resume NAME`.
    struct Resume: StatusCommand {
        static let configuration = CommandConfiguration(
            abstract: "Resume a paused campaign: what was moved aside goes back into the streams.")
        @OptionGroup var target: Target
        @Argument(help: "the campaign") var name: String

        func execute() throws(ValidationError) -> Int32 {
            let fleet = try target.fleet()
            guard let c = try CampaignCommand.known(fleet, name, "resume") else { return 1 }
            if c.state != .paused { return CampaignCommand.refuse("resume", "campaign '\(name)' is \(c.state.rawValue), not paused; nothing written") }
            let moved = try CampaignCommand.apply(fleet, name, state: .active)
            Console.out("campaign \(name): resumed on \(fleet.shards.count) shard(s); \(moved) paused notification(s) back in the streams")
            return 0
        }
    }

    /// `swiftpush campaign throttle NAME RATE`.
    struct Throttle: StatusCommand {
        static let configuration = CommandConfiguration(
            abstract: "Throttle a campaign: the whole fleet sends it at most RATE notifications per second ('off': no limit).",
            discussion: """
            The budget is a token bucket per shard in Redis, shared by every worker; RATE is split
            evenly over the shards written. Notifications over the budget wait (held briefly, or
            in the delayed set) without holding up other campaigns.
            """)
        @OptionGroup var target: Target
        // Both words in one list that takes what looks like an option too: a RATE of '-5'
        // must be told it is negative, not that it is missing.
        @Argument(parsing: .allUnrecognized, help: ArgumentHelp("the campaign, and notifications per second above 0 (or 'off')", valueName: "NAME RATE"))
        var words: [String] = []
        var name: String { words.first ?? "" }
        var rate: String { words.count > 1 ? words[1] : "" }

        func validate() throws(ValidationError) {
            guard words.count == 2 else { throw ValidationError("give NAME and RATE, got \(words.count) word(s): \(words.joined(separator: " "))") }
            if rate == "off" { return }
            guard let r = Double(rate), r > 0, r.isFinite, r <= 10_000_000 else {
                throw ValidationError("RATE must be a number of notifications per second above 0 (at most 10000000), or 'off'; got '\(rate)'")
            }
        }

        func execute() throws(ValidationError) -> Int32 {
            let fleet = try target.fleet()
            guard let c = try CampaignCommand.known(fleet, name, "throttle") else { return 1 }
            if c.state == .cancelled { return CampaignCommand.refuse("throttle", "campaign '\(name)' is cancelled; nothing written") }
            if fleet.shards.isEmpty { return CampaignCommand.refuse("throttle", "no shard found; nothing written") }
            let now = CampaignCommand.nowMillis()
            do throws(RedisError) {
                for s in fleet.shards {
                    if let r = Double(rate) {
                        try fleet.control(s).set(name, rate: r / Double(fleet.shards.count), nowMillis: now)
                    } else {
                        try fleet.control(s).clearRate(name, nowMillis: now)
                    }
                }
            } catch {
                throw ValidationError("Redis: \(error.description)")
            }
            Console.out("campaign \(name): " + (rate == "off" ? "throttle lifted" : "at most \(rate)/s") + " on \(fleet.shards.count) shard(s)")
            return 0
        }
    }

    /// `swiftpush campaign list`.
    struct List: StatusCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the campaigns known on the shards: state, rate limit, counts.")
        @OptionGroup var target: Target

        func execute() throws(ValidationError) -> Int32 {
            let fleet = try target.fleet()
            do throws(RedisError) {
                Console.out(CampaignCommand.header)
                for name in try fleet.names() {
                    if let c = try fleet.campaign(name) { Console.out(CampaignCommand.row(c)) }
                }
            } catch {
                throw ValidationError("Redis: \(error.description)")
            }
            return 0
        }
    }

    /// `swiftpush campaign show NAME`.
    struct Show: StatusCommand {
        static let configuration = CommandConfiguration(abstract: "Show one campaign: its state and counts, in all and per shard.")
        @OptionGroup var target: Target
        @Argument(help: "the campaign") var name: String

        func execute() throws(ValidationError) -> Int32 {
            let fleet = try target.fleet()
            guard let c = try CampaignCommand.known(fleet, name, "show") else { return 1 }
            Console.out(CampaignCommand.header)
            Console.out(CampaignCommand.row(c))
            for s in c.shards.keys.sorted() {
                let r = c.shards[s]!
                let state = r.control?.state.rawValue ?? "active"
                let changed = r.control.map { $0.updatedMillis > 0 ? ", changed at \($0.updatedMillis) ms" : "" } ?? ""
            Console.out("  shard \(s): state \(state), paused \(r.pausedNotifications) notification(s) in \(r.pausedEntries) entr(ies)\(changed)")
            }
            return 0
        }
    }

    /// The wall clock in UNIX ms (the control's `updated_ms`).
    static func nowMillis() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec / 1_000_000)
    }

    static let header = "CAMPAIGN STATE RATE ENQUEUED DONE ACCEPTED REJECTED FAILED CANCELLED PAUSED"

    /// One line of `list` and `show`: "-" for what nobody counted.
    static func row(_ c: CampaignFleet.Campaign) -> String {
        let n = c.counts
        let parts: [String] = [c.name, c.state.rawValue, c.rate.map { CampaignControl.text($0) } ?? "-",
                               n?.enqueued.map(String.init) ?? "-", String(n?.done ?? 0), String(n?.accepted ?? 0),
                               String(n?.rejected ?? 0), String(n?.failed ?? 0), String(n?.reasons["Cancelled"] ?? 0),
                               String(c.pausedNotifications)]
        return parts.joined(separator: " ")
    }
}
