import SwiftPushKeys

/// Why a queue operation failed.
public struct QueueError: Error, CustomStringConvertible, Sendable {
    /// What went wrong.
    public let description: String
    /// True when the queue's connection is gone: reconnect (with back-off) and try again. The
    /// operations are idempotent, so retrying one whose reply was lost is safe.
    public let connectionLost: Bool
    /// True when retrying cannot help until the configuration or the server changes (a wrong
    /// password, an untrusted certificate): the worker stops with the message.
    public let permanent: Bool

    /// An error with `description`.
    public init(_ description: String, connectionLost: Bool, permanent: Bool = false) {
        self.description = description
        self.connectionLost = connectionLost
        self.permanent = permanent
    }
}

/// One operation on a shard's queue, as the worker's machine asks for it. Each is atomic on
/// the queue's side and idempotent (a retry after a lost reply is harmless).
public enum QueueRequest: Sendable {
    /// Up to `max` new entries of each lane, the fast lane's first, waiting up to `blockMillis`
    /// for the first (0: no wait).
    case read(max: Int, blockMillis: Int)
    /// Up to `max` new entries of the fast lane only, waiting up to `blockMillis` for the first
    /// (0: no wait). Sent on the fast lane's own connection (`WorkerAction.Lane.fast`), where a
    /// wait holds nothing else up: `ShardMachine.readFastNext`.
    case readFast(max: Int, blockMillis: Int)
    /// Takes the guards of the entries' ids (and their progress): `claimed`.
    case claim([ClaimRequest])
    /// Records outcomes, parks 429s, updates progress, acknowledges and deletes finished
    /// entries (`EntrySettlement`): `settled`.
    case settle([EntrySettlement])
    /// Up to `max` entries pending with this consumer after `after` (nil: from the start), with
    /// their delivery counts; reads only: `pending`.
    case ownPending(after: String?, max: Int)
    /// Takes back these entries pending with this consumer, with their fields, counting no
    /// delivery, in order until their notifications would pass `budget` (the first is always
    /// taken; `RedisStreamScripts.takeOwn` says how an entry is counted): `takenBack`.
    case takeOwn([String], budget: Int)
    /// Hands back every entry still pending with this consumer (a stop that could not finish
    /// them): each one's idle time is set to `idleMillis` (years), its delivery count left
    /// alone, so that any worker's next reclaim, or this consumer's next life, takes it at once
    /// instead of after `min_idle_ms`: `handedBack`.
    case handBack(idleMillis: Int64)
    /// Counts one more delivery of each entry (before a re-delivered one is sent again): the
    /// new counts, nil for one no longer this consumer's: `counted`.
    case countDelivery([String])
    /// Records that a request of each entry of `add` was written in this delivery (one more
    /// written delivery each), and forgets the entries of `drop` (settled whole): `done`. Not
    /// idempotent for `add` (a retry after a lost reply may count one twice: the count is
    /// capped by the delivery counter where it is read).
    case markWritten(add: [String], drop: [String])
    /// Entries of other consumers idle past min-idle, from `cursor` ("-" first): `reclaimed`.
    case reclaim(cursor: String, max: Int)
    /// Moves delayed entries due by `nowMillis` back into the stream: `promoted`.
    case promote(nowMillis: Int64, max: Int)
    /// The group's pending count and lag: `backlog`.
    case backlog
    /// This worker's heartbeat (JSON) in the shard's `workers` hash: `done`.
    case heartbeat(String)
    /// Removes this worker's heartbeat (a clean stop): `done`.
    case dropHeartbeat
    /// The shard's campaign controls (`CampaignBoard`): `controls`.
    case controls
    /// Moves these entries, pending with this consumer and not claimed yet, aside into their
    /// paused campaign's stream (`RedisCampaignScripts.park`): `parked`.
    case park([ParkRequest])
    /// Takes up to `want` notifications' worth from `campaign`'s token bucket
    /// (`RedisCampaignScripts.budget`): `granted`.
    case budget(campaign: String, want: Int)
}

/// The answer to a `QueueRequest`.
public enum QueueReply: Sendable {
    /// Entries (read, taken back).
    case entries([QueueEntry])
    /// One answer per claimed entry, in order.
    case claimed([ClaimAnswer])
    /// Entries settled (marked) and skipped (settled before, by anyone), and the entries
    /// whose final settlement fell short of their count (`RedisStreamScripts.settle`: a lost
    /// checkpoint), applied as checkpoints and still pending.
    case settled(marked: Int, skipped: Int, short: [String])
    /// Pending entries.
    case pending([PendingEntry])
    /// Entries taken back, and how many of the ids asked for were dealt with (taken, or found
    /// no longer ours): the rest did not fit in the budget.
    case takenBack([QueueEntry], considered: Int)
    /// How many entries were handed back.
    case handedBack(Int)
    /// New delivery counts.
    case counted([Int?])
    /// Reclaimed entries and the cursor to go on from ("-": start again).
    case reclaimed(cursor: String, entries: [QueueEntry])
    /// How many delayed entries went back.
    case promoted(Int)
    /// Pending entries and lag (nil: unknown).
    case backlog(pending: Int, lag: Int?)
    /// Done, nothing to say.
    case done
    /// Every campaign with a control, by name.
    case controls([String: CampaignControl])
    /// Per entry asked to park, in order, what became of it.
    case parked([ParkAnswer])
    /// How many notifications of a throttled campaign may be sent now.
    case granted(Int)
}

/// A shard's queue, operation by operation, each waited for: `RedisStreamQueue` on Redis and
/// `InMemoryWorkQueue` (the same semantics in memory, for unit tests of the machine). The
/// worker's driver sends the same requests to Redis without waiting (`RedisShardCommands`).
public protocol WorkQueue: AnyObject {
    /// (Re)connects and makes sure the stream and the consumer group exist.
    func open() throws(QueueError)
    /// Performs `request` and returns its reply.
    func perform(_ request: QueueRequest) throws(QueueError) -> QueueReply
}
