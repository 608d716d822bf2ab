/// A reply the status reader cannot use (Redis answered, but not as documented).
public struct StatusReadError: Error, CustomStringConvertible, Sendable {
    /// What was wrong, for a message.
    public let description: String

    /// An error saying `description`.
    public init(_ description: String) { self.description = description }
}
