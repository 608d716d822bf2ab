import SwiftPushRedis
import SwiftPushWorkerMachine

/// The settle script's arguments for one entry's settlement (`RedisStreamScripts.settle` lists
/// their order): the record's start, the accepted ones as a count, a bitmap, ranges and (a
/// batch's) ids, each other outcome in the form its destination takes, the rest group, the
/// parked notifications.
enum RedisSettleArguments {
    /// Appends `s`'s arguments; `worker` is the consumer name format-1 outcomes carry.
    static func append(_ s: EntrySettlement, to args: inout RedisArguments, worker: String) {
        if let o = shortSingle(s) {
            appendShort(s.entryID, o, to: &args)
            return
        }
        args.append(s.entryID)
        switch s.destination {
        case .format1: args.append("1")
        case .format2: args.append("2")
        case .record: args.append("3")
        }
        args.append(integer: Int64(s.count))
        args.append(s.final ? "1" : "0")
        args.append(s.app)
        args.append(s.campaign)
        args.append(s.destination == .record ? s.recordHeader() : [])
        args.append(integer: Int64(s.accepted.count))
        if s.accepted.isEmpty {
            for _ in 0..<3 { args.append("") }
        } else {
            args.append(EntrySettlement.bitmap(s.accepted, count: s.count))
            args.append(IndexRanges.text(s.accepted))
            args.append(s.acceptedIDsText())
        }
        args.append(integer: Int64(s.repeats))
        args.append(integer: Int64(s.others.count))
        for other in s.others {
            let o = other.outcome
            args.append(integer: Int64(other.index))
            args.append(o.kindLetter)
            args.append(o.reason)
            let fields: [String]
            switch s.destination {
            case .format1:
                args.append("")
                fields = o.fields(worker: worker)
            case .format2:
                args.append(o.json())
                fields = []
            case .record:
                args.append(o.recordJSON(index: other.index, withID: s.kind == .batch))
                fields = []
            }
            let unregistered = o.tokenIsGone ? o.unregisteredFields() : []
            args.append(integer: Int64(fields.count))
            args.append(integer: Int64(unregistered.count))
            for f in fields { args.append(f) }
            for f in unregistered { args.append(f) }
        }
        if let rest = s.rest {
            args.append(rest.kindLetter)
            args.append(rest.reason)
            args.append(rest.restJSON())
        } else {
            args.append("")
        }
        if let d = s.delayed, !d.pieces.isEmpty {
            args.append(integer: Int64(d.pieces.count))
            args.append(integer: d.dueMillis)
            args.append(d.member)
            args.append(d.joinField)
            args.append(integer: Int64(d.fields.count * 2))
            for f in d.fields { args.append(f.name); args.append(f.value) }
            for p in d.pieces { args.append(integer: Int64(p.index)); args.append(p.bytes) }
        } else {
            args.append("0")
        }
    }

    /// The one outcome of `s` when it takes the short single form: a single entry's settlement
    /// in outcome format 1 with exactly one outcome and nothing else (the common case: 16
    /// arguments, the field names the script's own, instead of ~47).
    static func shortSingle(_ s: EntrySettlement) -> OutcomeRecord? {
        guard s.destination == .format1, s.final, s.count == 1, s.others.count == 1, s.accepted.isEmpty, s.rest == nil,
              s.delayed?.pieces.isEmpty ?? true else { return nil }
        return s.others[0].outcome
    }

    /// The short single form: entry, 's', then the outcome's values in the order of
    /// `OutcomeRecord.fields(worker:)` (the script writes the names, and leaves out the
    /// optional ones that are empty, as that does; `worker` is its own argument).
    static func appendShort(_ entryID: String, _ o: OutcomeRecord, to args: inout RedisArguments) {
        args.append(entryID)
        args.append("s")
        args.append(o.id)
        args.append(o.kindLetter)
        args.append(integer: Int64(o.status))
        args.append(o.reason)
        args.append(o.app)
        args.append(o.campaign)
        args.append(o.detail)
        args.append(o.apnsID)
        args.append(o.token)
        args.append(integer: Int64(o.attempts))
        args.append(integer: Int64(o.deliveries))
        args.append(integer: o.latencyUs)
        args.append(integer: o.timestampMs)
        args.append(o.maybeDelivered ? "1" : "")
    }
}
