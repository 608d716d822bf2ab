import CHiredis
import SwiftPushRedis
import SwiftPushKeys
import SwiftPushWorkerMachine

/// The Redis commands of each queue request and how their replies become a `QueueReply`: one
/// place for the protocol's wire form, used by the synchronous `RedisStreamQueue` and by the
/// worker's driver, which sends requests without waiting and reads replies as they come.
public struct RedisShardCommands: Sendable {
    /// The shard's keys.
    public let keys: StreamKeys
    /// The consumer group and this consumer's name.
    public let group: String
    public let consumer: String
    /// The reclaim's min-idle.
    public let minIdleMillis: Int
    /// The guards' lifetime: the DuplicateId window.
    public let guardTTLSeconds: Int

    public init(keys: StreamKeys, group: String, consumer: String, minIdleMillis: Int, guardTTLSeconds: Int) {
        self.keys = keys
        self.group = group
        self.consumer = consumer
        self.minIdleMillis = minIdleMillis
        self.guardTTLSeconds = guardTTLSeconds
    }

    /// Every script the protocol runs, loaded on each new connection (`SCRIPT LOAD`), so that a
    /// request is one `EVALSHA`; a server that lost them (NOSCRIPT) is reconnected to.
    static let scripts = [RedisStreamScripts.claim, RedisStreamScripts.settle, RedisStreamScripts.promote,
                          RedisStreamScripts.takeOwn, RedisStreamScripts.reclaim, RedisStreamScripts.countDelivery,
                          RedisStreamScripts.handBack, RedisStreamScripts.markWritten,
                          RedisCampaignScripts.controls, RedisCampaignScripts.park, RedisCampaignScripts.budget]

    /// What a new connection runs first: the group (made with the stream if need be; from 0, so
    /// that entries added before it existed are read) and the scripts. Replies: BUSYGROUP is fine.
    public func setupCommands() -> [RedisArguments] {
        [RedisArguments(["XGROUP", "CREATE", keys.stream, group, "0", "MKSTREAM"]),
         RedisArguments(["XGROUP", "CREATE", keys.fastStream, group, "0", "MKSTREAM"])]
            + Self.scripts.map { RedisArguments(["SCRIPT", "LOAD", $0.body]) }
    }

    /// Checks the replies to `setupCommands`.
    public func checkSetup(_ replies: [RedisReply]) throws(QueueError) {
        for r in replies {
            if case .error(let e) = r, !e.hasPrefix("BUSYGROUP") { throw Self.error(e) }
        }
    }

    /// The commands of `request`, in order (each has one reply).
    public func commands(for request: QueueRequest) -> [RedisArguments] {
        switch request {
        case .read(let max, let block):
            // Both lanes in one call, the fast one first (its entries come first in the reply);
            // COUNT applies to each.
            var a = ["XREADGROUP", "GROUP", group, consumer, "COUNT", String(max)]
            if block > 0 { a += ["BLOCK", String(block)] }
            return [RedisArguments(a + ["STREAMS", keys.fastStream, keys.stream, ">", ">"])]
        case .readFast(let max, let block):
            var a = ["XREADGROUP", "GROUP", group, consumer, "COUNT", String(max)]
            if block > 0 { a += ["BLOCK", String(block)] }
            return [RedisArguments(a + ["STREAMS", keys.fastStream, ">"])]
        case .claim(let entries):
            return [script(RedisStreamScripts.claim, keys: [keys.progress], bytes: entries.count * 64) { args in
                args.append(keys.guardPrefix)
                args.append(integer: Int64(guardTTLSeconds))
                // The short form when every entry is a fresh one with one id (the script's doc).
                if entries.allSatisfy({ $0.origin == nil && !$0.wantProgress && $0.ids.count == 1 }) {
                    args.append("s")
                    for e in entries {
                        args.append(e.entryID)
                        args.append(e.ids[0])
                    }
                    return
                }
                for e in entries {
                    args.append(e.entryID)
                    args.append(e.origin ?? "")
                    args.append(e.wantProgress ? "1" : "0")
                    args.append(integer: Int64(e.ids.count))
                    for id in e.ids { args.append(id) }
                }
            }]
        case .settle(let settlements):
            let size = settlements.reduce(0) { $0 + 200 + $1.size * 24 }
            return [script(RedisStreamScripts.settle, keys: [keys.stream, keys.outcomes, keys.unregistered, keys.delayed, keys.progress, keys.stats, keys.fastStream],
                           bytes: size) { args in
                args.append(group)
                args.append(consumer)
                args.append(keys.delayedEntryPrefix)
                for s in settlements { RedisSettleArguments.append(s, to: &args, worker: consumer) }
            }]
        case .ownPending(let after, let max):
            // The fast lane's listing, then the bulk lane's (`reply` joins them, fast first).
            return FastLane.ownPendingCommands(keys, group: group, consumer: consumer, after: after, max: max)
        case .takeOwn(let ids, let budget):
            return [script(RedisStreamScripts.takeOwn, keys: [keys.stream, keys.written, keys.fastStream], bytes: ids.count * 24) { args in
                args.append(group)
                args.append(consumer)
                args.append(integer: Int64(budget))
                for id in ids { args.append(id) }
            }]
        case .handBack(let idle):
            return [script(RedisStreamScripts.handBack, keys: [keys.stream, keys.fastStream]) { args in
                args.append(group)
                args.append(consumer)
                args.append(integer: idle)
            }]
        case .countDelivery(let ids):
            return [script(RedisStreamScripts.countDelivery, keys: [keys.stream, keys.fastStream]) { args in
                args.append(group)
                args.append(consumer)
                for id in ids { args.append(id) }
            }]
        case .reclaim(let cursor, let max):
            return [script(RedisStreamScripts.reclaim, keys: [keys.stream, keys.written, keys.fastStream]) { args in
                for a in [group, consumer, String(minIdleMillis), cursor, String(max)] { args.append(a) }
            }]
        case .markWritten(let add, let drop):
            return [script(RedisStreamScripts.markWritten, keys: [keys.written], bytes: (add.count + drop.count) * 24) { args in
                args.append(integer: Int64(add.count))
                for id in add + drop { args.append(id) }
            }]
        case .promote(let now, let max):
            return [script(RedisStreamScripts.promote, keys: [keys.stream, keys.delayed, keys.fastStream]) { args in
                for a in [String(now), String(max), keys.delayedEntryPrefix] { args.append(a) }
            }]
        case .backlog:
            return [RedisArguments(["XINFO", "GROUPS", keys.stream]), RedisArguments(["XREVRANGE", keys.stream, "+", "-", "COUNT", "1"]),
                    RedisArguments(["XINFO", "GROUPS", keys.fastStream]), RedisArguments(["XREVRANGE", keys.fastStream, "+", "-", "COUNT", "1"])]
        case .heartbeat(let json):
            return [RedisArguments(["HSET", keys.workers, consumer, json])]
        case .dropHeartbeat:
            return [RedisArguments(["HDEL", keys.workers, consumer])]
        case .controls:
            return [script(RedisCampaignScripts.controls, keys: [keys.campaigns]) { $0.append(keys.campaignPrefix) }]
        case .park(let entries):
            return [script(RedisCampaignScripts.park, keys: [keys.stream, keys.progress, keys.written, keys.stats, keys.delayed],
                           bytes: entries.count * 80) { args in
                for a in [group, consumer, keys.campaignPrefix, keys.pausedPrefix, keys.delayedEntryPrefix] { args.append(a) }
                for e in entries {
                    args.append(e.entryID)
                    args.append(e.campaign)
                    args.append(integer: Int64(e.count))
                    args.append(e.dueMillis.map(String.init) ?? "")
                }
            }]
        case .budget(let campaign, let want):
            return [script(RedisCampaignScripts.budget, keys: [keys.campaignPrefix + campaign, keys.throttlePrefix + campaign]) {
                $0.append(integer: Int64(want))
            }]
        }
    }

    /// Whether `request` writes what a failover must not take back: claims, settles, entries
    /// taken back or over, counted deliveries, promotions. With `wait_replicas`, a `WAIT` follows
    /// each one on its connection (`RedisLane`). Not reads: a read's entries are claimed next,
    /// and WAIT confirms every write its connection made before it, the read's delivery
    /// included; nor listings, the backlog or heartbeats.
    static func isConfirmedWrite(_ request: QueueRequest) -> Bool {
        switch request {
        case .claim, .settle, .takeOwn, .countDelivery, .reclaim, .promote, .handBack, .park: true
        // A budget a failover takes back is a few notifications of a throttle's tenth of a
        // second given twice: not worth a WAIT 20 times a second.
        case .read, .readFast, .ownPending, .backlog, .heartbeat, .dropHeartbeat, .markWritten, .controls, .budget: false
        }
    }

    /// One reply as read off the wire: a read's entries parsed in place from hiredis's tree
    /// (the large replies of the hot path), anything else copied.
    public enum Parsed: Sendable {
        case entries([QueueEntry])
        case reply(RedisReply)
    }

    /// Reads reply `r` to a command of `request`.
    public static func parse(_ r: UnsafePointer<redisReply>, for request: QueueRequest) -> Parsed {
        switch request {
        case .read, .readFast:
            if r.pointee.type != REDIS_REPLY_ERROR { return .entries(RedisStreamReplies.entries(fromRead: r).0) }
        default: break
        }
        return .reply(RedisReply(copying: r))
    }

    /// The reply of `request` from its commands' replies (`parse`d, in order).
    public func reply(for request: QueueRequest, _ parsed: [Parsed]) throws(QueueError) -> QueueReply {
        var replies: [RedisReply] = []
        for p in parsed {
            switch p {
            case .entries(let e): return .entries(e)
            case .reply(.error(let e)): throw Self.error(e)
            case .reply(let r): replies.append(r)
            }
        }
        guard let first = replies.first else { throw QueueError("no reply", connectionLost: true) }
        switch request {
        case .read, .readFast:
            return .entries([])
        case .claim(let entries):
            var answers = [ClaimAnswer](repeating: ClaimAnswer(), count: entries.count)
            for row in first.elements {
                let f = row.elements
                guard f.count >= 2, let e = f[0].integer, e >= 1, Int(e) <= entries.count else { continue }
                if case .string(let p) = f[1] { answers[Int(e) - 1].progress = p }
                var k = 2
                while k + 1 < f.count {
                    if let position = f[k].integer, let owner = f[k + 1].text {
                        answers[Int(e) - 1].duplicates.append(.init(position: Int(position) - 1, owner: owner))
                    }
                    k += 2
                }
            }
            return .claimed(answers)
        case .settle:
            let parts = first.elements
            let n = parts.prefix(2).map { Int($0.integer ?? 0) }
            return .settled(marked: n.first ?? 0, skipped: n.count > 1 ? n[1] : 0,
                            short: parts.count > 2 ? parts[2].elements.compactMap(\.text) : [])
        case .ownPending(let after, let max):
            return .pending(FastLane.ownPending(replies, after: after, max: max))
        case .takeOwn:
            let parts = first.elements
            guard parts.count == 2 else { throw QueueError("takeOwn: unexpected reply", connectionLost: false) }
            return .takenBack(parts[1].elements.compactMap(RedisStreamReplies.entry(fromScriptRow:)), considered: Int(parts[0].integer ?? 0))
        case .handBack:
            return .handedBack(Int(first.integer ?? 0))
        case .countDelivery(let ids):
            let counts = first.elements.map { $0.integer.flatMap { $0 > 0 ? Int($0) : nil } }
            guard counts.count == ids.count else {
                throw QueueError("countDelivery: \(counts.count) counts for \(ids.count) entries", connectionLost: false)
            }
            return .counted(counts)
        case .reclaim:
            let parts = first.elements
            guard parts.count == 2 else { return .reclaimed(cursor: "-", entries: []) }
            return .reclaimed(cursor: parts[0].text ?? "-", entries: parts[1].elements.compactMap(RedisStreamReplies.entry(fromScriptRow:)))
        case .promote:
            return .promoted(Int(first.integer ?? 0))
        case .backlog:
            // Both lanes' figures, added.
            let bulk = backlog(groups: first, last: replies.count > 1 ? replies[1] : .null)
            guard replies.count > 3, case .backlog(let p, let l) = bulk,
                  case .backlog(let fp, let fl) = backlog(groups: replies[2], last: replies[3]) else { return bulk }
            return .backlog(pending: p + fp, lag: l.flatMap { a in fl.map { a + $0 } })
        case .heartbeat, .dropHeartbeat, .markWritten:
            return .done
        case .controls:
            return .controls(CampaignControl.all(from: first, elements: \.elements, text: \.text))
        case .park(let entries):
            let answers = first.elements.map { ParkAnswer(rawValue: Int($0.integer ?? 0)) ?? .takeIn }
            guard answers.count == entries.count else {
                throw QueueError("park: \(answers.count) answers for \(entries.count) entries", connectionLost: false)
            }
            return .parked(answers)
        case .budget:
            return .granted(Int(first.integer ?? 0))
        }
    }

    /// The group's pending count, and its lag: 0 when the group has delivered up to the
    /// stream's last entry (or the stream is empty: the worker deletes settled entries),
    /// whatever XINFO GROUPS's `lag` says (Redis 7.0's entries-read counter behind it can stay
    /// stale after a restart: issue 23); Redis's figure otherwise (nil when it cannot tell).
    private func backlog(groups: RedisReply, last: RedisReply) -> QueueReply {
        for g in groups.elements {
            var fields: [String: RedisReply] = [:]
            let flat = g.elements
            var i = 0
            while i + 1 < flat.count { fields[flat[i].text ?? ""] = flat[i + 1]; i += 2 }
            guard fields["name"]?.text == group else { continue }
            let pending = Int(fields["pending"]?.integer ?? 0)
            let lastID = last.elements.first?.elements.first?.text
            if let delivered = fields["last-delivered-id"]?.text.flatMap(StreamID.init),
               lastID.flatMap(StreamID.init).map({ delivered >= $0 }) ?? true {
                return .backlog(pending: pending, lag: 0)
            }
            return .backlog(pending: pending, lag: fields["lag"]?.integer.map { Int($0) })
        }
        return .backlog(pending: 0, lag: nil)
    }

    /// An `EVALSHA` of `script` on `keys` with the arguments `fill` appends.
    private func script(_ script: RedisScript, keys: [String], bytes: Int = 256, _ fill: (inout RedisArguments) -> Void) -> RedisArguments {
        var args = RedisArguments(reservingBytes: bytes)
        args.append("EVALSHA")
        args.append(script.sha)
        args.append(integer: Int64(keys.count))
        for key in keys { args.append(key) }
        fill(&args)
        return args
    }

    /// An error reply as a queue error: a server still loading its data (LOADING), one that lost
    /// the group (NOGROUP, a restart without persistence) or the scripts (NOSCRIPT), and a
    /// cluster's redirect or refusal (MOVED, ASK, CLUSTERDOWN, TRYAGAIN, MASTERDOWN, READONLY: the
    /// shard's slot is elsewhere now, or failing over; UNBLOCKED: a blocking read's master was
    /// demoted mid-read) is an outage: reconnect, to the slot's master as a fresh map names it,
    /// and set the group and scripts up again; the command was not run (or read nothing), and
    /// every request is idempotent. Anything else is the command's own failure.
    static func error(_ text: String) -> QueueError {
        let outage = text.hasPrefix("NOGROUP") || text.hasPrefix("NOSCRIPT") || RedisReplyDisposition.isRedirectOrRetry(errorText: text)
        return QueueError("Redis: \(text)", connectionLost: outage)
    }
}
