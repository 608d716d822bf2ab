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
        apnsID = APNsID(ascii: view.apnsID) ?? APNsID(high: 0, low: 0)
        uniqueID = APNsID(ascii: view.uniqueID)
        timestamp = view.timestampMs > 0 ? view.timestampMs : nil
        attempts = Int(view.attempts)
        latency = .microseconds(view.latencyMicros)
    }
}
