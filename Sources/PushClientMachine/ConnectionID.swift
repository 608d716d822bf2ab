/// A connection as `ClientCore` names it: its entry in the core's `ConnectionPool` and which use
/// of that entry it is, so that an event or an action about a connection that has since closed
/// finds nothing, rather than the connection that took its entry next.
package struct ConnectionID: Hashable, Sendable, CustomStringConvertible {
    /// The entry (`ConnectionPool.entries`), also where the client keeps the connection's object.
    package let index: Int32
    /// How many connections had the entry before this one.
    package let generation: UInt32

    package var description: String { "connection \(index).\(generation)" }
}
