import ArgumentParser
import Foundation
import SwiftPushRedis
import SwiftPushWorker

/// `swiftpush outcomes`: prints the outcomes stream (or the unregistered-token stream), and
/// with --follow waits for new entries.
struct OutcomesCommand: StatusCommand {
    static let configuration = CommandConfiguration(
        commandName: "outcomes",
        abstract: "Print the outcomes the workers recorded (or the 410 token stream).",
        usage: "swiftpush outcomes [--redis HOST:PORT | --cluster HOST:PORT,...] [--shard S] [--json] [--follow] [--from ID] [--count N] [--campaign NAME] [--unregistered]",
        discussion: "Text lines: ID OUTCOME STATUS REASON apns-id=UUID entry=STREAM-ID [detail]")

    @OptionGroup var redisOptions: RedisOptions
    @Flag(help: "one JSON object per line (every field of the entry, plus stream_id)")
    var json = false
    @Flag(help: "keep waiting for new outcomes (until interrupted or --count)")
    var follow = false
    @Option(help: ArgumentHelp("start after this stream id (default 0: from the start; $: only new)", valueName: "ID"))
    var from: String?
    @Option(help: ArgumentHelp("stop after N outcomes (in outcome format 2 this may be inside a batch entry; --from that entry's id resumes after the whole entry)", valueName: "N"))
    var count: Int?
    @Option(help: ArgumentHelp("only the outcomes of this campaign (the entries' campaign field)", valueName: "NAME"))
    var campaign: String?
    @Flag(help: "read unregistered:{S} (tokens APNs reported gone) instead")
    var unregistered = false

    func validate() throws(ValidationError) {
        try checkRange(count, "count", 1...Int.max)
    }

    func execute() throws(ValidationError) -> Int32 {
        let (redis, keys) = try redisOptions.connect()
        defer { redis.close() }
        let stream = unregistered ? keys.unregistered : keys.outcomes
        let limit = count ?? Int.max
        var cursor = from ?? "0"
        if cursor == "$" {
            // Resolve "$" once, so that a later read does not skip entries added in between.
            let last = (try? redis.command(RedisArguments(["XREVRANGE", stream, "+", "-", "COUNT", "1"]), key: stream))?.elements.first?.elements.first?.text
            cursor = last ?? "0"
        }
        var printed = 0
        while printed < limit {
            var request = ["XREAD", "COUNT", String(min(1000, limit - printed))]
            if follow { request += ["BLOCK", "1000"] }
            request += ["STREAMS", stream, cursor]
            let reply: RedisReply
            do throws(RedisError) {
                reply = try redis.command(RedisArguments(request), key: stream)
            } catch {
                Console.err("swiftpush outcomes: \(error.description)")
                return 1
            }
            if case .error(let e) = reply { Console.err("swiftpush outcomes: \(e)"); return 1 }
            let entries = reply.elements.first?.elements.last?.elements ?? []
            if entries.isEmpty {
                if follow { continue }
                break
            }
            for e in entries {
                guard let id = e.elements.first?.text else { continue }
                cursor = id
                let flat = e.elements.count > 1 ? e.elements[1].elements.map { $0.text ?? "" } : []
                var fields: [(String, String)] = []
                var i = 0
                while i + 1 < flat.count { fields.append((flat[i], flat[i + 1])); i += 2 }
                guard let outcomes = Self.outcomes(in: fields) else {
                    Console.err("swiftpush outcomes: entry \(id) is an outcome-format-2 batch (or format-3 records) whose outcomes field is not a JSON array of objects")
                    return 1
                }
                for outcome in outcomes where printed < limit && Self.isIn(campaign, outcome) {
                    Console.out(json ? Self.json(id: id, outcome) : Self.text(outcome, id: id, unregistered: unregistered))
                    printed += 1
                }
            }
        }
        return 0
    }

    /// Whether an outcome belongs to the campaign asked for (every outcome when none is asked).
    static func isIn(_ campaign: String?, _ fields: [(String, String)]) -> Bool {
        guard let campaign else { return true }
        return fields.contains { $0.0 == "campaign" && $0.1 == campaign }
    }

    /// The outcomes one stream entry holds, each as its fields: the entry itself in format 1; in
    /// format 2 (`v` 2) each object of its `outcomes` array, with the entry's `v` and `worker`
    /// (numbers turned back into text, as format 1 holds them). Field order does not matter:
    /// `text` and `json` look fields up by name. Nil for a format-2 entry whose array cannot be
    /// read (never printed as one bogus outcome).
    static func outcomes(in fields: [(String, String)]) -> [[(String, String)]]? {
        let f = Dictionary(fields, uniquingKeysWith: { a, _ in a })
        if f["v"] == "3" {
            guard let rows = try? OutcomeRow.rows(streamID: "", fields: fields) else { return nil }
            return rows.map(Self.fields(of:))
        }
        guard f["v"] == "2" else { return [fields] }
        guard let text = f["outcomes"],
              let array = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[String: Any]] else { return nil }
        return array.map { object in
            object.map { name, value in (name, (value as? NSNumber).map { "\($0.int64Value)" } ?? "\(value)") }
                + [("v", "2"), ("worker", f["worker"] ?? "")]
        }
    }

    /// A format-3 record's line as fields, named as formats 1 and 2 name them; a group (a
    /// multicast's accepted tokens, or a refusal of a whole entry) adds `count` and `indexes`
    /// (the notifications' positions in the entry, as ranges: "0-41,43-499").
    static func fields(of r: OutcomeRow) -> [(String, String)] {
        var f: [(String, String)] = [("v", "3"), ("worker", r.worker), ("id", r.id), ("outcome", r.outcome), ("status", String(r.status)),
                                     ("reason", r.reason), ("entry", r.entry), ("kind", r.kind), ("app", r.app),
                                     ("attempts", String(r.attempts)), ("deliveries", String(r.deliveries))]
        if !r.token.isEmpty { f.append(("token", r.token)) }
        if !r.apnsID.isEmpty { f.append(("apns_id", r.apnsID)) }
        if !r.detail.isEmpty { f.append(("detail", r.detail)) }
        if !r.campaign.isEmpty { f.append(("campaign", r.campaign)) }
        if r.latencyUs > 0 { f.append(("latency_us", String(r.latencyUs))) }
        if r.timestampMs > 0 { f.append(("timestamp_ms", String(r.timestampMs))) }
        if r.maybeDelivered { f.append(("maybe_delivered", "1")) }
        if let i = r.index { f.append(("index", String(i))) }
        if r.count > 1 || r.indexes != nil {
            f.append(("count", String(r.count)))
            f.append(("indexes", r.indexes ?? ""))
        }
        return f
    }

    static func json(id: String, _ fields: [(String, String)]) -> String {
        var object: [String: Any] = ["stream_id": id]
        for (k, v) in fields { object[k] = OutcomeRecord.numericFields.contains(k) || k == "count" || k == "index" ? (Int64(v).map { $0 as Any } ?? v) : v }
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }

    static func text(_ fields: [(String, String)], id streamID: String, unregistered: Bool) -> String {
        let f = Dictionary(fields, uniquingKeysWith: { a, _ in a })
        if unregistered {
            return "\(f["token"] ?? "-") \(f["reason"] ?? "-") timestamp_ms=\(f["timestamp_ms"] ?? "0") id=\(f["id"] ?? "-") app=\(f["app"] ?? "-")"
        }
        var line = "\(f["id"].map { $0.isEmpty ? "-" : $0 } ?? "-") \(f["outcome"] ?? "?") \(f["status"] ?? "0") \((f["reason"] ?? "").isEmpty ? "-" : f["reason"]!)"
        line += " apns-id=\(f["apns_id"] ?? "-") entry=\(f["entry"] ?? "-")"
        if let n = f["count"] { line += " count=\(n) indexes=\(f["indexes"] ?? "")" }
        if let d = f["detail"], !d.isEmpty { line += " (\(d))" }
        return line
    }
}
