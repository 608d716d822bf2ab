import SwiftPushRedis
import SwiftPushWorker
import SwiftPushKeys

/// The XADDs of `swiftpush enqueue`, one batch per stream (a pipeline goes to the one master
/// that serves its shard's slot), and the `enqueued` counters of `stats:{s}` that `swiftpush
/// status` reads what remains from (docs/worker.md, "Status"): after each pipeline, one
/// `HINCRBY` per counter for the entries Redis took (the shard's, and each campaign's).
struct EnqueueBatches {
    private struct Entry {
        let command: RedisArguments
        let notifications: Int
        let campaign: String?
    }
    private var batches: [String: [Entry]] = [:]
    /// `swiftpush enqueue --at`: the `send_at` (UNIX ms) added to every entry, if any.
    var sendAt: Int64?
    /// Entries written, refused by Redis (an error reply), and written but not confirmed by WAIT.
    private(set) var enqueued = 0, refused = 0, unconfirmed = 0
    /// Notifications in the entries written (a batch or multicast entry holds many).
    private(set) var notifications = 0

    /// Adds an XADD to `stream` of an entry of `notifications` notifications of `campaign`;
    /// returns the batch's size.
    mutating func add(_ command: RedisArguments, stream: String, notifications: Int, campaign: String?) -> Int {
        var command = command
        // After the entry's own fields: a single line's own send_at, read first, wins.
        if let sendAt {
            command.append("send_at")
            command.append(String(sendAt))
        }
        batches[stream, default: []].append(Entry(command: command, notifications: notifications, campaign: campaign))
        return batches[stream]!.count
    }

    /// Writes `stream`'s batch; false when Redis was lost (the message is printed).
    mutating func flush(_ stream: String, redis: RedisRouter, wait: RedisWait?) -> Bool {
        guard let batch = batches[stream], !batch.isEmpty else { return true }
        let slot = RedisSlot.of(stream)
        var counts: [String: Int] = [:]
        do throws(RedisError) {
            let result = try redis.pipeline(batch.map(\.command), slot: slot, wait: wait)
            for (entry, reply) in zip(batch, result.replies) {
                if case .error(let e) = reply {
                    Console.err("swiftpush enqueue: XADD: \(e)")
                    refused += 1
                    continue
                }
                enqueued += 1
                notifications += entry.notifications
                counts["enqueued", default: 0] += entry.notifications
                if let c = entry.campaign, !c.isEmpty { counts["campaign:\(c):enqueued", default: 0] += entry.notifications }
            }
            if !result.isConfirmed(wait) { unconfirmed += batch.count }
            let stats = StreamKeys(shard: Self.shard(of: stream)).stats
            let increments = counts.sorted { $0.key < $1.key }.map { RedisArguments(["HINCRBY", stats, $0.key, String($0.value)]) }
            if !increments.isEmpty { _ = try redis.pipeline(increments, slot: slot, wait: nil) }
        } catch {
            Console.err("swiftpush enqueue: \(error.description)")
            return false
        }
        batches[stream] = []
        return true
    }

    /// Every stream with entries not written yet.
    var streams: [String] { batches.keys.sorted() }

    /// The shard of `push:{s}`.
    static func shard(of stream: String) -> String {
        guard let open = stream.firstIndex(of: "{"), let close = stream.lastIndex(of: "}"), open < close else { return stream }
        return String(stream[stream.index(after: open)..<close])
    }
}
