import SwiftPushRedis
/// The common shape of an outcome — a notification APNs answered (or refused) with nothing
/// extra to say: no detail, no 410 timestamp, not a maybe-delivered failure — which is nearly
/// every outcome of a busy worker. The settle script holds this shape's field names as
/// constants, so such an outcome crosses to Redis as its values only (10 arguments instead of
/// 30): fewer arguments to format here, to parse and to turn into Lua strings there.
extension OutcomeRecord {
    /// The fields of the sent shape, in outcome-stream order: the same fields, in the same
    /// order, as `fields(worker:)` gives for such an outcome (a test holds the two together).
    /// The settle script fills in `v` (1), `entry` and `worker`; the values of the others
    /// follow the entry id in the settlement, in this order.
    public static let sentShape = ["v", "id", "entry", "outcome", "status", "reason", "app", "apns_id", "token",
                                   "attempts", "deliveries", "worker", "latency_us"]

    /// How many values a sent-shape settlement carries (every field but v, entry and worker).
    static let sentShapeValueCount = sentShape.count - 3

    /// Whether the outcome has the sent shape (its optional fields are exactly the shape's).
    public var hasSentShape: Bool {
        detail.isEmpty && timestampMs == 0 && !maybeDelivered && !app.isEmpty && !apnsID.isEmpty && !token.isEmpty
    }

    /// Appends the values of a sent-shape outcome, in `sentShape` order without v, entry and worker.
    func appendSentShapeValues(to args: inout RedisArguments) {
        args.append(id)
        args.append(kind.rawValue)
        args.append(integer: Int64(status))
        args.append(reason)
        args.append(app)
        args.append(apnsID)
        args.append(token)
        args.append(integer: Int64(attempts))
        args.append(integer: Int64(deliveries))
        args.append(integer: latencyUs)
    }
}
