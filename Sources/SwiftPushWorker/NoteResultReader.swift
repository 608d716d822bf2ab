import CSwiftPushABI
import PushClientCore
import PushCore
import SwiftPushWorkerMachine

/// Turns each result a client's poll takes into the machine's `NoteResult`.
struct NoteResultReader: ResultReader {
    var results: [NoteResult] = []

    mutating func read(_ r: ResultView) {
        let kind: OutcomeRecord.Kind
        switch UInt32(bitPattern: r.outcome) {
        case PUSH_OUTCOME_ACCEPTED.rawValue: kind = .accepted
        case PUSH_OUTCOME_REJECTED.rawValue: kind = .rejected
        default: kind = .failed
        }
        let text = r.reasonText
        results.append(NoteResult(tag: r.tag, kind: kind, status: r.status, reason: APNsReason(rawValue: r.reason) ?? .unknown,
                                  reasonText: text.isEmpty ? "" : String(decoding: text.prefix(while: { $0 != 0 }), as: UTF8.self),
                                  attempts: Int(r.attempts), timestampMs: r.timestampMs))
    }
}
