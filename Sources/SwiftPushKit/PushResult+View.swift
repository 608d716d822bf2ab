import PushCore
import PushTransport

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
        let code = APNsReason(rawValue: view.reason) ?? .unknown
        let text = view.reasonText
        detail = text.isEmpty ? "" : String(decoding: text, as: UTF8.self)
        switch code {
        case .none: reason = nil
        case .unknown: reason = PushReason(unknown: detail)
        default: reason = PushReason(code)
        }
        apnsID = APNsID(trustedASCII: view.apnsID)
        let unique = view.uniqueID
        uniqueID = unique.isEmpty ? nil : APNsID(trustedASCII: unique)
        timestamp = view.timestampMs > 0 ? view.timestampMs : nil
        attempts = Int(view.attempts)
        latencyMicroseconds = view.latencyMicros
    }
}
