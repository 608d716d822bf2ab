/// An error the C ABI reports as a status code (`PUSH_E_*`, `Tables/status.tsv`) with a message
/// naming what was wrong: a notification that broke a rule (`NotificationRules.Violation`), a
/// payload that could not be built, a `.apns` file that could not be read, a client call that
/// failed (`ClientError`). One type for what used to be four that said the same thing; the C
/// exports copy it into `push_error`, the Swift API makes it a `PushError`.
public struct StatusError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The C ABI status.
    public let status: PushStatus
    /// What was wrong, naming the field, the option or the file; never key material, device
    /// tokens or payloads.
    public let message: String

    /// The message.
    public var description: String { message }

    /// An error with `status` and `message`.
    public init(_ status: PushStatus, _ message: String) {
        self.status = status
        self.message = message
    }
}
