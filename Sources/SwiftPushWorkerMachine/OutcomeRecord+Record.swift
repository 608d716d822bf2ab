import PushCore

/// Outcome records (`v 3`, docs/worker.md "Outcome records"): one JSON object per entry and
/// settle, in one `outcomes` entry per settle — what a multicast or batch entry's outcomes are
/// written as (single entries too with `outcome_format` 3). Acceptances are counted and their
/// indexes given as ranges (a batch's ids listed); every other outcome is an object of its own,
/// written here; a refusal of a whole multicast is one group (`rest`).
extension OutcomeRecord {
    /// This outcome as an element of a record's `others`: its index, the id when the record
    /// does not name it (a batch's element), the token, and what format 1 says of it but the
    /// fields the record holds once (entry, app, deliveries) and the apns-id (derived from id
    /// and token, docs/worker.md).
    package func recordJSON(index: Int, withID: Bool) -> [UInt8] {
        var w = PayloadJSONWriter(capacity: 128 + detail.utf8.count)
        w.beginObject()
        w.key("index"); w.integer(Int64(index))
        if withID { w.key("id"); w.string(id) }
        if !token.isEmpty { w.key("token"); w.string(token) }
        w.key("outcome"); w.string(kind.rawValue)
        w.key("status"); w.integer(Int64(status))
        w.key("reason"); w.string(reason)
        if !detail.isEmpty { w.key("detail"); w.string(detail) }
        w.key("attempts"); w.integer(Int64(attempts))
        if latencyUs != 0 { w.key("latency_us"); w.integer(latencyUs) }
        if timestampMs != 0 { w.key("timestamp_ms"); w.integer(timestampMs) }
        if maybeDelivered { w.key("maybe_delivered"); w.string("1") }
        w.endObject()
        return w.bytes
    }

    /// This outcome as a record's `rest` group: the members of `recordJSON` that a group shares
    /// (outcome, status, reason, detail), without the braces (the script adds them).
    package func restJSON() -> [UInt8] {
        var w = PayloadJSONWriter(capacity: 96 + detail.utf8.count)
        w.beginObject()
        w.key("outcome"); w.string(kind.rawValue)
        w.key("status"); w.integer(Int64(status))
        w.key("reason"); w.string(reason)
        if !detail.isEmpty { w.key("detail"); w.string(detail) }
        w.endObject()
        return Array(w.bytes.dropFirst().dropLast())
    }

    /// The kind as the settle script's letter (`a`, `r`, `f`).
    package var kindLetter: String {
        switch kind {
        case .accepted: return "a"
        case .rejected: return "r"
        case .failed: return "f"
        }
    }
}

extension EntrySettlement {
    /// The start of this entry's record (without its closing brace: the settle script adds the
    /// members only it can know, such as `count`): entry, kind, id, app, campaign, deliveries.
    package func recordHeader() -> [UInt8] {
        var w = PayloadJSONWriter(capacity: 128)
        w.beginObject()
        w.key("entry"); w.string(entryID)
        w.key("kind"); w.string(kind.rawValue)
        if let id { w.key("id"); w.string(id) }
        if !app.isEmpty { w.key("app"); w.string(app) }
        if !campaign.isEmpty { w.key("campaign"); w.string(campaign) }
        w.key("deliveries"); w.integer(Int64(deliveries))
        w.endObject()
        return Array(w.bytes.dropLast())
    }

    /// A batch's accepted ids as the script takes them: JSON strings joined by ",\n" (valid
    /// JSON as it is; the newline lets the script split them in the rare case it must filter).
    package func acceptedIDsText() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(acceptedIDs.count * 12)
        for (i, id) in acceptedIDs.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")); out.append(0x0A) }
            var text = id
            text.withUTF8 { PayloadJSONWriter.appendString($0, to: &out) }
        }
        return out
    }

    /// `indexes` as a bitmap of `count` bits, bit i at byte i/8 from its high bit (the order of
    /// Redis's SETBIT): the form the progress hash keeps. Inlinable (`IndexRanges.text`).
    @inlinable
    package static func bitmap(_ indexes: some Sequence<Int>, count: Int) -> [UInt8] {
        var map = [UInt8](repeating: 0, count: (count + 7) / 8)
        for i in indexes { map[i >> 3] |= 0x80 >> UInt8(i & 7) }
        return map
    }
}
