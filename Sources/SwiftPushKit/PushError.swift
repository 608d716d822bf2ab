import PushCore
import PushClientCore

/// The one error of the Swift API: a code (the C ABI's `PUSH_E_*` status, `Tables/status.tsv`)
/// and a message naming what was wrong. Messages never quote key material, device tokens or
/// payloads.
///
/// The rule, for the whole API: an outcome is a value, a call that could not do its job throws.
/// A notification the client took ends in a `PushResult` (accepted, rejected by APNs, or
/// failed: its `reason` says why), returned by `send` or yielded by a batch, one per
/// notification and counted once, because APNs (or the deadline) decided it. A call that
/// cannot do what it was asked throws a `PushError`: a notification that breaks a rule is never
/// taken (in a batch, its `BatchResult` holds the error), the client is closed, a connection
/// cannot be made (`waitUntilConnected`), or APNs refused a channel call (`.rejected`, with
/// `status` and `reason`: a channel call has no outcome to count, only a job done or not). A
/// cancelled task's wait throws `CancellationError`, the only other error.
///
/// The code is a struct, not an enum, so that codes can be added without breaking a `switch`:
/// compare with `==` or match with `case .queueFull:`.
///
/// ```swift
/// do {
///     let result = try await client.send(notification)       // taken: a result
///     if result.reason == .unregistered { forget(token) }     // APNs said no: still a result
/// } catch let error as PushError where error.code == .badDeviceToken {
///     print(error.message)                                     // refused: an error
/// }
/// do {
///     try await client.deleteChannel(id)
/// } catch let error as PushError where error.code == .rejected {
///     print(error.status, error.reason?.text ?? "")            // e.g. 400 ChannelNotRegistered
/// }
/// ```
public struct PushError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of error it is: a `PUSH_E_*` status of the C ABI (`Tables/status.tsv`).
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The C ABI's value (`PUSH_E_*`, negative).
        public let rawValue: Int32

        /// The code for a C ABI status value.
        public init(rawValue: Int32) { self.rawValue = rawValue }

        /// The static description of the code (`push_strerror`'s text).
        public var description: String {
            PushStatus(rawValue: rawValue).map { "\($0.message)" } ?? "status \(rawValue)"
        }
    }

    /// What kind of error it is.
    public let code: Code
    /// What was wrong, naming the field, the option or the file.
    public let message: String
    /// For `.rejected` (a channel call APNs refused): the HTTP status APNs answered with.
    public let status: Int
    /// For `.rejected`: the reason APNs gave.
    public let reason: PushReason?

    /// An error with `code` and `message` (and, for a refusal by APNs, its status and reason).
    public init(_ code: Code, _ message: String, status: Int = 0, reason: PushReason? = nil) {
        self.code = code
        self.message = message
        self.status = status
        self.reason = reason
    }

    /// The message.
    public var description: String { message }

    /// The library's error (a client call, a broken rule, a payload that could not be built)
    /// with the same code and message.
    init(_ error: StatusError) {
        self.init(Code(rawValue: error.status.rawValue), error.message)
    }
}
