/// One notification's end in a batch sent with `APNsClient.send(contentsOf:)`: its result, or
/// the error that refused it at the send (a rule it broke; the client closing).
public struct BatchResult: Sendable {
    /// The notification's position in the batch.
    public let index: Int
    /// Its result, or why it was not sent.
    public let result: Result<PushResult, PushError>
}
