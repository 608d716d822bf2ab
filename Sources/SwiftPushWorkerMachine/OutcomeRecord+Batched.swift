import PushCore

/// Outcome format 2 (`"outcome_format": 2`, docs/worker.md): one stream entry per settled batch
/// instead of one per outcome — fields `v` (2), `worker`, `count` and `outcomes`, a JSON array
/// with one object per outcome. Redis then adds one entry of four fields per batch instead of
/// a thousand arguments' worth of entries, which halves what recording costs it (the outcome
/// XADD was the largest single cost per notification).
extension OutcomeRecord {
    /// The fields whose JSON values are numbers (the others are strings), as `swiftpush
    /// outcomes --json` prints them for either format.
    public static let numericFields: Set<String> = ["status", "attempts", "deliveries", "latency_us", "timestamp_ms"]

    /// This outcome as one object of a format-2 batch: the fields of format 1
    /// (`fields(worker:)`) but `v` and `worker`, which the batch entry carries once, with the
    /// `numericFields` as JSON numbers. Written directly (a test holds it to `fields(worker:)`).
    public func json() -> [UInt8] {
        var w = PayloadJSONWriter(capacity: 160 + detail.utf8.count)
        w.beginObject()
        w.key("id"); w.string(id)
        w.key("entry"); w.string(entryID)
        w.key("outcome"); w.string(kind.rawValue)
        w.key("status"); w.integer(Int64(status))
        w.key("reason"); w.string(reason)
        if !app.isEmpty { w.key("app"); w.string(app) }
        if !campaign.isEmpty { w.key("campaign"); w.string(campaign) }
        if !detail.isEmpty { w.key("detail"); w.string(detail) }
        if !apnsID.isEmpty { w.key("apns_id"); w.string(apnsID) }
        if !token.isEmpty { w.key("token"); w.string(token) }
        w.key("attempts"); w.integer(Int64(attempts))
        w.key("deliveries"); w.integer(Int64(deliveries))
        w.key("latency_us"); w.integer(latencyUs)
        if timestampMs != 0 { w.key("timestamp_ms"); w.integer(timestampMs) }
        if maybeDelivered { w.key("maybe_delivered"); w.string("1") }
        w.endObject()
        return w.bytes
    }
}
