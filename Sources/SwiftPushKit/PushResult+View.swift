import PushCore
import PushClientCore

extension PushResult {
    /// The result a client's slot holds (`ResultView`): the Swift form of the outbox that the
    /// C ABI reads into `push_result`. Strings are made only for what is not accepted.
    init(_ view: ResultView) {
        switch view.outcome {
        case 1: outcome = .accepted
        case 2: outcome = .rejected
        default: outcome = .failed
        }
        status = Int(view.status)
        let text = view.reasonText
        detail = text.isEmpty ? "" : String(decoding: text, as: UTF8.self)
        if view.reason == 0 {
            reason = nil // accepted: most results, no lookup
        } else {
            let code = APNsReason(rawValue: view.reason) ?? .unknown
            reason = code == .unknown ? PushReason(unknown: detail) : PushReason(code)
        }
        apnsID = APNsID(trustedASCII: view.apnsID)
        let unique = view.uniqueID
        uniqueID = unique.isEmpty ? nil : APNsID(trustedASCII: unique)
        timestamp = view.timestampMs > 0 ? view.timestampMs : nil
        attempts = Int(view.attempts)
        latencyMicroseconds = view.latencyMicros
    }
}
