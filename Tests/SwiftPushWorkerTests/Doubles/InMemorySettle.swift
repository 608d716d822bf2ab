import PushCore
@testable import SwiftPushWorker
@testable import SwiftPushWorkerMachine
@testable import SwiftPushWorkerRedis

/// The settle step of `RedisStreamScripts.settle` in Swift, on an `InMemoryShard`: the same
/// filtering by progress, the same records (byte for byte the same JSON), the same rule for a
/// write that fails midway (nothing marked without its record).
struct InMemorySettle {
    let shard: InMemoryShard
    let worker: String

    private struct Mark {
        let entry: String
        let final: Bool
        /// A final settlement that fell short (applied as a checkpoint; reported).
        let short: Bool
        let hadProgress: Bool
        let map: [UInt8]
        let counts: [(kind: OutcomeRecord.Kind, reason: String, n: Int)]
        let app: String, campaign: String
        var needsRecord = false, needsObjects = false
    }

    func apply(_ settlements: [EntrySettlement]) throws(QueueError) -> QueueReply {
        var marks: [Mark] = []
        var records: [[UInt8]] = [], objects: [[UInt8]] = []
        var recordCount = 0, skipped = 0
        var failure: QueueError?
        for s in settlements {
            guard shard.pending[s.entryID] != nil else { skipped += 1; continue }
            do throws(QueueError) {
                let (mark, record, objs, count) = try one(s)
                if let record { records.append(record); recordCount += count }
                objects += objs
                marks.append(mark)
            } catch {
                failure = error
                break
            }
        }
        var recordsOK = true, objectsOK = true
        if !records.isEmpty {
            do throws(QueueError) {
                try shard.addOutcome([("v", "3"), ("worker", worker), ("count", String(recordCount)),
                                      ("records", "[" + records.map { String(decoding: $0, as: UTF8.self) }.joined(separator: ",") + "]")])
            } catch {
                recordsOK = false
                failure = failure ?? error
            }
        }
        if !objects.isEmpty {
            do throws(QueueError) {
                try shard.addOutcome([("v", "2"), ("worker", worker), ("count", String(objects.count)),
                                      ("outcomes", "[" + objects.map { String(decoding: $0, as: UTF8.self) }.joined(separator: ",") + "]")])
            } catch {
                objectsOK = false
                failure = failure ?? error
            }
        }
        var marked = 0
        var short: [String] = []
        for m in marks where (recordsOK || !m.needsRecord) && (objectsOK || !m.needsObjects) {
            marked += 1
            if m.short { short.append(m.entry) }
            if m.final {
                shard.pending[m.entry] = nil
                shard.remove(m.entry)
                if m.hadProgress { shard.progress[m.entry] = nil }
            } else {
                shard.progress[m.entry] = m.map
            }
            for c in m.counts {
                let word = c.kind.rawValue.lowercased()
                shard.stats[word, default: 0] += c.n
                if !c.reason.isEmpty { shard.stats["reason:" + c.reason, default: 0] += c.n }
                if !m.app.isEmpty { shard.stats["app:\(m.app):\(word)", default: 0] += c.n }
                if !m.campaign.isEmpty {
                    shard.stats["campaign:\(m.campaign):\(word)", default: 0] += c.n
                    if !c.reason.isEmpty { shard.stats["campaign:\(m.campaign):reason:\(c.reason)", default: 0] += c.n }
                }
            }
        }
        if let failure { throw failure }
        return .settled(marked: marked, skipped: skipped, short: short)
    }

    /// One pending entry's settlement: its writes, and its mark (applied by the caller once
    /// every write it needs is known to have succeeded).
    private func one(_ s: EntrySettlement) throws(QueueError) -> (Mark, [UInt8]?, [[UInt8]], Int) {
        let n = s.count
        let p = n > 1 ? shard.progress[s.entryID] : nil
        var c = [UInt8](repeating: 0, count: (n + 7) / 8)
        if let p { for j in 0..<min(p.count, c.count) { c[j] = p[j] } }
        func isSet(_ i: Int) -> Bool { c[i >> 3] & (0x80 >> UInt8(i & 7)) != 0 }
        func set(_ i: Int) { c[i >> 3] |= 0x80 >> UInt8(i & 7) }
        var counts: [(kind: OutcomeRecord.Kind, reason: String, n: Int)] = []
        // Accepted: those not done before.
        let fresh = s.accepted.enumerated().filter { !isSet($0.element) }
        let k = fresh.count
        let at = fresh.count == s.accepted.count ? IndexRanges.text(s.accepted) : IndexRanges.text(fresh.map(\.element))
        var ids: [UInt8] = []
        if s.kind == .batch, k > 0 {
            var kept = s
            kept.acceptedIDs = fresh.map { s.acceptedIDs[$0.offset] }
            ids = fresh.count == s.accepted.count ? s.acceptedIDsText() : Array(kept.acceptedIDs.map { id -> String in
                var out: [UInt8] = []
                var t = id
                t.withUTF8 { PayloadJSONWriter.appendString($0, to: &out) }
                return String(decoding: out, as: UTF8.self)
            }.joined(separator: ",").utf8)
        }
        for a in fresh { set(a.element) }
        if k > 0 { counts.append((.accepted, "", k)) }
        var frags: [[UInt8]] = []
        for other in s.others where !isSet(other.index) {
            set(other.index)
            let o = other.outcome
            if o.tokenIsGone { try shard.addUnregistered(Self.pairs(o.unregisteredFields())) }
            switch s.destination {
            case .format1: try shard.addOutcome(Self.pairs(o.fields(worker: worker)))
            case .format2: frags.append(o.json())
            case .record: frags.append(o.recordJSON(index: other.index, withID: s.kind == .batch))
            }
            counts.append((o.kind, o.reason, 1))
        }
        var parked = 0
        if let d = s.delayed {
            let pieces = d.pieces.filter { !isSet($0.index) }
            for piece in pieces { set(piece.index) }
            parked = pieces.count
            if parked > 0 {
                var fields = d.fields.map { (name: $0.name, value: $0.value) }
                switch d.joinField {
                case "tokens": fields.append((Array("tokens".utf8), Array(pieces.map { $0.bytes }.joined(separator: Array(",".utf8)))))
                case "notifications": fields.append((Array("notifications".utf8), Array("[".utf8) + Array(pieces.map { $0.bytes }.joined(separator: Array(",".utf8))) + Array("]".utf8)))
                default: break
                }
                shard.delayed[d.member] = (d.dueMillis, fields)
            }
        }
        var rc = 0
        var rat = ""
        if let rest = s.rest {
            let open = (0..<n).filter { !isSet($0) }
            rc = open.count
            rat = IndexRanges.text(open)
            for i in open { set(i) }
            if rc > 0 { counts.append((rest.kind, rest.reason, rc)) }
        }
        // A final settlement must leave every notification with an outcome; short of that, a
        // checkpoint of the entry is gone (a failover): a checkpoint instead, reported.
        let short = s.final && n > 1 && s.rest == nil && (0..<n).contains { !isSet($0) }
        let final = s.final && !short
        let cnt = k + frags.count + rc
        var mark = Mark(entry: s.entryID, final: final, short: short, hadProgress: p != nil, map: c, counts: counts,
                        app: s.app, campaign: s.campaign)
        var record: [UInt8]?
        var objects: [[UInt8]] = []
        switch s.destination {
        case .format2:
            objects = frags
            mark.needsObjects = !frags.isEmpty
        case .record where cnt > 0 || parked > 0 || final:
            var r = s.recordHeader() + Array(",\"count\":\(cnt)".utf8)
            if k > 0 {
                r += Array(",\"accepted\":\(k),\"accepted_at\":\"\(at)\"".utf8)
                if !ids.isEmpty { r += Array(",\"accepted_ids\":[".utf8) + ids + [UInt8(ascii: "]")] }
            }
            if !frags.isEmpty { r += Array(",\"others\":[".utf8) + Array(frags.joined(separator: [UInt8(ascii: ",")])) + [UInt8(ascii: "]")] }
            if rc > 0, let rest = s.rest {
                r += Array(",\"rest\":{".utf8) + rest.restJSON() + Array("},\"rest_count\":\(rc),\"rest_at\":\"\(rat)\"".utf8)
            }
            if parked > 0 { r += Array(",\"delayed\":\(parked)".utf8) }
            if final {
                if s.repeats > 0 { r += Array(",\"repeats\":\(s.repeats)".utf8) }
                r += Array(",\"final\":true".utf8)
            }
            record = r + [UInt8(ascii: "}")]
            mark.needsRecord = true
        default:
            break
        }
        return (mark, record, objects, cnt)
    }

    /// A flat name, value, name, value... list as pairs.
    static func pairs(_ flat: [String]) -> [(String, String)] {
        stride(from: 0, to: flat.count - 1, by: 2).map { (flat[$0], flat[$0 + 1]) }
    }
}
