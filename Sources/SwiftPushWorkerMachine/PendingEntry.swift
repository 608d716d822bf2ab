/// An entry pending with a consumer, as the pending list shows it.
public struct PendingEntry: Sendable, Equatable {
    /// Its stream id.
    public let entryID: String
    /// Its delivery count.
    public let deliveries: Int

    /// An entry `entryID` delivered `deliveries` times.
    public init(entryID: String, deliveries: Int) {
        self.entryID = entryID
        self.deliveries = deliveries
    }
}
