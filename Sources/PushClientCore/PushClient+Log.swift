import PushClientMachine
import PushCore

extension PushClient {
    /// A result callback that takes longer than this is reported (`callback.slow`).
    static let slowCallbackNanos: UInt64 = 100_000_000
}
