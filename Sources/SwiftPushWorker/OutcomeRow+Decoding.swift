import Foundation
import SwiftPushWorkerMachine

extension OutcomeRow {
    /// Why an outcomes stream entry could not be read.
    public struct DecodingError: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    /// The lines one outcomes stream entry (`fields`, id `streamID`) holds: itself in format 1;
    /// each object of its `outcomes` array in format 2; in format 3 each record's accepted
    /// notifications (one line each for a batch or single entry, one group for a multicast),
    /// its other outcomes one by one, its rest group. Throws for a format-2 or 3 entry whose
    /// array cannot be read (never reported as one bogus outcome).
    public static func rows(streamID: String, fields: [(String, String)]) throws(DecodingError) -> [OutcomeRow] {
        let f = Dictionary(fields, uniquingKeysWith: { a, _ in a })
        switch f["v"] {
        case "2":
            guard let array = json(f["outcomes"]) as? [[String: Any]] else {
                throw DecodingError(description: "entry \(streamID) is an outcome-format-2 batch whose outcomes field is not a JSON array of objects")
            }
            return array.map { row(streamID: streamID, format: 2, worker: f["worker"] ?? "", $0) }
        case "3":
            guard let records = json(f["records"]) as? [[String: Any]] else {
                throw DecodingError(description: "entry \(streamID) holds outcome records whose records field is not a JSON array of objects")
            }
            var out: [OutcomeRow] = []
            for r in records { out += try recordRows(streamID: streamID, worker: f["worker"] ?? "", r) }
            return out
        default:
            return [row(streamID: streamID, format: 1, worker: f["worker"] ?? "", f)]
        }
    }

    private static func json(_ text: String?) -> Any? {
        text.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) }
    }

    private static func string(_ v: Any?) -> String {
        if let s = v as? String { return s }
        if let n = v as? NSNumber { return n.stringValue }
        return ""
    }

    private static func int(_ v: Any?) -> Int64 {
        if let n = v as? NSNumber { return n.int64Value }
        if let s = v as? String { return Int64(s) ?? 0 }
        return 0
    }

    /// A format-1 entry's fields or a format-2 object as a line.
    private static func row(streamID: String, format: Int, worker: String, _ o: [String: Any]) -> OutcomeRow {
        var r = OutcomeRow(streamID: streamID, format: format, worker: worker, entry: string(o["entry"]), id: string(o["id"]),
                           outcome: string(o["outcome"]))
        r.fill(o)
        r.app = string(o["app"])
        r.deliveries = Int(int(o["deliveries"]))
        r.apnsID = string(o["apns_id"])
        return r
    }

    /// The per-notification members of `o` (format 1, 2 and a record's `others`).
    private mutating func fill(_ o: [String: Any]) {
        token = Self.string(o["token"])
        status = Int(Self.int(o["status"]))
        reason = Self.string(o["reason"])
        detail = Self.string(o["detail"])
        attempts = Int(Self.int(o["attempts"]))
        latencyUs = Self.int(o["latency_us"])
        timestampMs = Self.int(o["timestamp_ms"])
        maybeDelivered = Self.string(o["maybe_delivered"]) == "1"
    }

    /// One record's lines.
    private static func recordRows(streamID: String, worker: String, _ rec: [String: Any]) throws(DecodingError) -> [OutcomeRow] {
        let kind = string(rec["kind"]), entry = string(rec["entry"]), recordID = string(rec["id"])
        var base = OutcomeRow(streamID: streamID, format: 3, worker: worker, entry: entry, id: recordID, outcome: "")
        base.kind = kind
        base.app = string(rec["app"])
        base.campaign = string(rec["campaign"])
        base.deliveries = Int(int(rec["deliveries"]))
        var out: [OutcomeRow] = []
        let accepted = Int(int(rec["accepted"]))
        if accepted > 0 {
            let at = string(rec["accepted_at"])
            guard let indexes = IndexRanges.indexes(at), indexes.count == accepted else {
                throw DecodingError(description: "entry \(streamID): a record of \(entry) says \(accepted) accepted at '\(at)'")
            }
            if kind == "multicast" {
                var r = base
                r.outcome = "ACCEPTED"
                r.status = 200
                r.count = accepted
                r.indexes = at
                out.append(r)
            } else {
                let ids = (rec["accepted_ids"] as? [Any])?.map(string) ?? []
                guard kind == "single" || ids.count == accepted else {
                    throw DecodingError(description: "entry \(streamID): a record of \(entry) lists \(ids.count) accepted ids for \(accepted)")
                }
                for (k, index) in indexes.enumerated() {
                    var r = base
                    r.outcome = "ACCEPTED"
                    r.status = 200
                    r.index = index
                    if kind != "single" { r.id = ids[k] }
                    r.apnsID = NameBasedUUID.make(name: Array(r.id.utf8))
                    out.append(r)
                }
            }
        }
        for case let o as [String: Any] in (rec["others"] as? [Any]) ?? [] {
            var r = base
            r.fill(o)
            r.outcome = string(o["outcome"])
            r.index = Int(int(o["index"]))
            if kind == "batch" { r.id = string(o["id"]) }
            if r.attempts > 0 || r.status != 0 {
                r.apnsID = kind == "multicast" ? NameBasedUUID.make(name: Array((r.id + "/" + r.token).utf8))
                                               : NameBasedUUID.make(name: Array(r.id.utf8))
            }
            out.append(r)
        }
        if let rest = rec["rest"] as? [String: Any] {
            var r = base
            r.fill(rest)
            r.outcome = string(rest["outcome"])
            r.count = Int(int(rec["rest_count"]))
            r.indexes = string(rec["rest_at"])
            out.append(r)
        }
        return out
    }
}
