#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import Foundation
import SwiftPushRedis
import SwiftPushWorker
import SwiftPushKeys

/// `swiftpush enqueue`: JSON lines (one notification per line) to stream entries, XADDs
/// pipelined by the thousand.
struct EnqueueCommand: StatusCommand {
    static let configuration = CommandConfiguration(
        commandName: "enqueue",
        abstract: "Add notifications (JSON lines) to a worker's Redis stream.",
        usage: "swiftpush enqueue [--redis HOST:PORT | --cluster HOST:PORT,...] [--shard S | --shards N] [--file FILE | --tokens FILE --payload JSON --id ID [--per-entry N]] [--app NAME] [--campaign NAME] [--pipeline N] [--wait-replicas N] [--quiet]",
        discussion: """
        Each line is a JSON object whose keys become the entry's fields
        (docs/worker.md):
          {"id":"n-1","app":"demo","token":"00fc...","payload":{"aps":{"alert":"Hi"}}}
        Lines go into batch entries of up to 500 (--batch N; grouped by shard,
        app and campaign: one read, claim and record per entry, a tenth of
        Redis's cost per notification; the outcomes are records, format 3);
        --batch 1 writes each line as its own single entry (format 1), whose
        keys become the entry's fields: objects and arrays (the payload) as
        JSON text, numbers as decimal text. A line of another kind of entry
        (with "v" other than 1, "tokens" or "notifications") is written as
        its own entry. With --shards N each line goes to shard crc16(id) mod N
        (push:{0}...push:{N-1}; the same rule as the Python Producer). With
        --wait-replicas N each pipeline is followed by WAIT on its connection.
        With --tokens FILE (one hex token per line) and --payload (JSON text,
        or @FILE), one payload goes to every token in multicast entries of
        --per-entry tokens (default 500, at most 1000); entry k gets the id
        ID#k (ID alone when one entry holds them all). Each (id, token) pair
        is one notification with one outcome (docs/worker.md, "Multicast").
        Lowercase hex tokens are written packed (tokens_bin: half the bytes);
        an entry with any other token lists them as text (tokens).
        --campaign NAME sets the campaign field (echoed in outcomes, counted
        by swiftpush status) on lines that name none. With --file on a terminal,
        more than 5000 lines show a progress line on standard error (count,
        rate, time left); --quiet hides it. Prints 'enqueued N notifications in M entries' at the end. Exit status: 0 all lines enqueued (and
        confirmed), 1 some line was not JSON (the others were enqueued) or some
        entries were not confirmed by WAIT, or Redis was lost for longer than
        failover_timeout_ms, 2 usage error or a Redis that refuses us (wrong
        password, untrusted certificate: at once, without retrying).
        """)

    @OptionGroup var redisOptions: RedisOptions
    @Option(help: ArgumentHelp("JSON lines to read (default: standard input)", valueName: "FILE"), completion: .file())
    var file: String?
    @Option(help: ArgumentHelp("device tokens, one per line: multicast entries of one payload (--payload, --id)", valueName: "FILE"), completion: .file())
    var tokens: String?
    @Option(help: ArgumentHelp("the multicast entries' payload: JSON text, or @FILE", valueName: "JSON"))
    var payload: String?
    @Option(help: ArgumentHelp("the multicast entries' id (entry k of several: ID#k)", valueName: "ID"))
    var id: String?
    @Option(help: ArgumentHelp("put up to N lines in one batch entry (format 2, `notifications`; lines grouped by shard, app and campaign): one entry, one claim and one record for N notifications (default \(Self.defaultBatch); 1: each line its own single entry, format 1)", valueName: "N"))
    var batch: Int?
    @Option(help: ArgumentHelp("tokens per multicast entry (default 500, at most \(EntryKind.maxNotifications))", valueName: "N"))
    var perEntry: Int?
    @Option(help: ArgumentHelp("the app of lines that name none", valueName: "NAME"))
    var app: String?
    @Option(help: ArgumentHelp("the campaign of lines that name none (swiftpush status --campaign NAME follows it)", valueName: "NAME"))
    var campaign: String?
    @Flag(help: "no progress line on standard error (shown on a terminal for more than \(ProgressLine.defaultThreshold) lines)")
    var quiet = false
    @Option(help: ArgumentHelp("XADDs per round trip (default 1000)", valueName: "N"))
    var pipeline: Int?
    @Option(help: ArgumentHelp("spread lines over shards 0...N-1 by their id (instead of --shard)", valueName: "N"))
    var shards: Int?
    @Option(help: ArgumentHelp("confirm each pipeline on N replicas with WAIT (default: the config's wait_replicas, else 0)", valueName: "N"))
    var waitReplicas: Int?
    @Option(help: ArgumentHelp("WAIT's timeout (default 1000)", valueName: "MS"))
    var waitTimeoutMs: Int?
    @Option(help: ArgumentHelp("the lane: fast (push:{S}:fast, read first by every worker, for transactional notifications) or bulk (push:{S}, default)", valueName: "LANE"))
    var lane: EnqueueLane = .bulk
    @Option(help: ArgumentHelp("hold the notifications until TIME (RFC 3339, e.g. 2026-12-01T09:00:00Z, or UNIX ms): the worker parks them in the delayed set and sends them within about a second of it; a time past is an error", valueName: "TIME"))
    var at: String?
    @Option(parsing: .unconditional, help: ArgumentHelp("throttle the --campaign to at most this many notifications per second over the fleet, unless it has a rate already (swiftpush campaign throttle)", valueName: "PER_S"))
    var rate: Double?

    func validate() throws(ValidationError) {
        try checkRange(pipeline, "pipeline", 1...100_000)
        try checkRange(shards, "shards", 1...16384)
        try checkRange(waitReplicas, "wait-replicas", 0...16)
        try checkRange(waitTimeoutMs, "wait-timeout-ms", 1...3_600_000)
        try checkRange(perEntry, "per-entry", 1...EntryKind.maxNotifications)
        try checkRange(batch, "batch", 1...EntryKind.maxNotifications)
        if batch != nil && tokens != nil { throw ValidationError("--batch goes with JSON lines, not --tokens") }
        if tokens != nil && (payload == nil || id == nil) { throw ValidationError("--tokens needs --payload and --id") }
        if tokens == nil && (payload != nil || id != nil || perEntry != nil) { throw ValidationError("--payload, --id and --per-entry go with --tokens") }
        if tokens != nil && file != nil { throw ValidationError("give --file or --tokens, not both") }
        _ = try sendAtMillis()
        try validateRate()
    }

    func execute() throws(ValidationError) -> Int32 {
        let (redis, keys) = try redisOptions.connect()
        defer { redis.close() }
        try applyRate(redis, keys: keys)
        let configuration = redis.connector.configuration
        let replicas = waitReplicas ?? configuration.waitReplicas
        let wait = replicas > 0 ? RedisWait(replicas: replicas, timeoutMillis: waitTimeoutMs ?? configuration.waitTimeoutMillis) : nil
        let pipeline = self.pipeline ?? 1000
        if let tokens, let payload, let id {
            return try enqueueMulticast(tokensPath: tokens, payload: payload, id: id, redis: redis, keys: keys, wait: wait, pipeline: pipeline)
        }
        let path = self.file ?? "/dev/stdin"
        guard let file = fopen(path, "r") else { throw ValidationError("cannot read \(path): \(String(cString: strerror(errno)))") }
        defer { fclose(file) }
        let defaultApp = app
        // The total is known when the input is a file (counted first: a byte scan, far cheaper
        // than the enqueue); from a pipe the line shows the count and rate only.
        var progress = ProgressLine(total: Self.lineCount(path) ?? 0, quiet: quiet || self.file == nil)
        var batches = EnqueueBatches()
        batches.sendAt = try sendAtMillis()
        var grouper = BatchEntryGrouper()
        // Lines go into batch entries unless --batch 1 (or they are entries of another kind).
        let perEntry = batch ?? Self.defaultBatch
        var bad = 0, lineNumber = 0
        var linePointer: UnsafeMutablePointer<CChar>?
        var capacity = 0
        defer { free(linePointer) }

        while true {
            let n = getline(&linePointer, &capacity, file)
            if n < 0 { break }
            lineNumber += 1
            let data = Data(bytes: linePointer!, count: n)
            if data.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) { continue }
            guard let object = (try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])) as? [String: Any] else {
                Console.err("swiftpush enqueue: line \(lineNumber) is not a JSON object; skipped")
                bad += 1
                continue
            }
            let stream = lane.stream(of: shards.map { StreamKeys(shard: ShardSpread.shard(of: Self.idText(object["id"]), count: $0)) } ?? keys)
            if perEntry > 1 && Self.isSingleNotification(object) {
                let lineApp = object["app"].map { String(decoding: Self.fieldValue($0), as: UTF8.self) } ?? defaultApp ?? ""
                let lineCampaign = object["campaign"].map { String(decoding: Self.fieldValue($0), as: UTF8.self) } ?? campaign
                var text = data
                while let last = text.last, last == 0x0A || last == 0x0D || last == 0x20 { text.removeLast() }
                if let full = grouper.add(Array(text), stream: stream, app: lineApp, campaign: lineCampaign, limit: perEntry),
                   batches.add(full.command, stream: stream, notifications: full.count, campaign: lineCampaign) >= max(1, pipeline / perEntry)
                    && !batches.flush(stream, redis: redis, wait: wait) { return 1 }
                progress.update(done: lineNumber)
                continue
            }
            var command = RedisArguments(reservingBytes: 256)
            command.append("XADD")
            command.append(stream)
            command.append("*")
            var hasApp = false
            for (key, value) in object.sorted(by: { $0.key < $1.key }) {
                command.append(key)
                command.append(Self.fieldValue(value))
                if key == "app" { hasApp = true }
            }
            if !hasApp, let defaultApp { command.append("app"); command.append(defaultApp) }
            if object["campaign"] == nil, let campaign { command.append("campaign"); command.append(campaign) }
            let lineCampaign = object["campaign"].map { String(decoding: Self.fieldValue($0), as: UTF8.self) } ?? campaign
            if batches.add(command, stream: stream, notifications: Self.notificationCount(object), campaign: lineCampaign) >= pipeline
                && !batches.flush(stream, redis: redis, wait: wait) { return 1 }
            progress.update(done: lineNumber)
        }
        for rest in grouper.drain() {
            _ = batches.add(rest.command, stream: rest.stream, notifications: rest.count, campaign: rest.campaign)
        }
        for stream in batches.streams where !batches.flush(stream, redis: redis, wait: wait) { return 1 }
        progress.finish(done: lineNumber)
        return Self.summary(batches, bad: bad, wait: wait)
    }

    /// Lines per batch entry without `--batch`: a single notification's own entry costs Redis
    /// ~20 µs (its read, guard, outcome row, acknowledgement and deletion each per entry); in
    /// entries of 500 it costs ~2-3 µs (docs/worker.md, "Benchmark").
    static let defaultBatch = 500

    /// The notifications a line's entry holds: a multicast's tokens, a batch's elements, else
    /// one (the `enqueued` counters and the summary count notifications, not entries).
    static func notificationCount(_ object: [String: Any]) -> Int {
        func count(_ value: Any?) -> Int? {
            switch value {
            case let list as [Any]: return list.count
            case let text as String where text.hasPrefix("["):
                return (try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [Any])?.count
            case let text as String: return text.split(separator: ",").count
            default: return nil
            }
        }
        return max(1, count(object["tokens"]) ?? count(object["notifications"]) ?? 1)
    }

    /// Whether a line is one notification that may go into a batch entry: no `v` but 1, and
    /// none of a multicast's or a batch's own fields (such a line is an entry of its own kind,
    /// written as it is).
    static func isSingleNotification(_ object: [String: Any]) -> Bool {
        if let v = object["v"], String(decoding: fieldValue(v), as: UTF8.self) != "1" { return false }
        return object["tokens"] == nil && object["tokens_bin"] == nil && object["notifications"] == nil
    }

    /// Prints `enqueued N notifications in M entries` (both units: an entry may hold 500
    /// notifications, and `enqueued 200` after 100,000 lines read as a loss) and what WAIT did
    /// not confirm; the exit status.
    static func summary(_ batches: EnqueueBatches, bad: Int, wait: RedisWait?) -> Int32 {
        Console.out("enqueued \(batches.notifications) notifications in \(batches.enqueued) entries")
        if batches.unconfirmed > 0, let wait {
            Console.err("swiftpush enqueue: \(batches.unconfirmed) entries were written but not confirmed by \(wait.replicas) replica(s) within \(wait.timeoutMillis) ms (a failover may lose them)")
        }
        return bad == 0 && batches.refused == 0 && batches.unconfirmed == 0 ? 0 : 1
    }

    /// The number of lines of a regular file (a last line without its newline counts), or nil
    /// for anything else (standard input, a pipe), whose length is unknown until it ends.
    static func lineCount(_ path: String) -> Int? {
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, let file = fopen(path, "r") else { return nil }
        defer { fclose(file) }
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        var lines = 0, last: UInt8 = 0x0A
        while true {
            let n = buffer.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, file) }
            if n == 0 { break }
            for i in 0..<n where buffer[i] == 0x0A { lines += 1 }
            last = buffer[n - 1]
        }
        return last == 0x0A ? lines : lines + 1
    }

    /// The id a line's shard is chosen by: its "id" as text (a number's decimal text).
    static func idText(_ value: Any?) -> String {
        guard let value else { return "" }
        return String(decoding: fieldValue(value), as: UTF8.self)
    }

    /// A JSON value as an entry field: strings as they are, the rest as JSON text.
    static func fieldValue(_ value: Any) -> [UInt8] {
        if let s = value as? String { return Array(s.utf8) }
        if let b = value as? Bool, "\(type(of: value))".contains("Bool") { return Array((b ? "true" : "false").utf8) }
        if let n = value as? NSNumber { return Array(n.stringValue.utf8) }
        if value is NSNull { return Array("null".utf8) }
        if let data = try? JSONSerialization.data(withJSONObject: value, options: [.withoutEscapingSlashes]) { return Array(data) }
        return []
    }
}
