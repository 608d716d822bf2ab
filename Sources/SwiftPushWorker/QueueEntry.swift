/// One stream entry as read from the queue: its stream id (`1700000000000-0`) and its fields in
/// the order the producer gave them. Field names and values are bytes: nothing is assumed about
/// what a producer wrote until `EntryParser` has checked it.
public struct QueueEntry: Sendable, Equatable {
    /// The entry's id in the stream (what XACK takes).
    public let entryID: String
    /// The fields, in order.
    public let fields: [(name: [UInt8], value: [UInt8])]
    /// How many times the queue has delivered it (1 on a first read; higher after reclaims).
    public var deliveries: Int

    /// An entry with `fields`.
    public init(entryID: String, fields: [(name: [UInt8], value: [UInt8])], deliveries: Int = 1) {
        self.entryID = entryID
        self.fields = fields
        self.deliveries = deliveries
    }

    /// An entry from string fields (tests, the CLI).
    public init(entryID: String, _ fields: [(String, String)], deliveries: Int = 1) {
        self.init(entryID: entryID, fields: fields.map { (Array($0.0.utf8), Array($0.1.utf8)) }, deliveries: deliveries)
    }

    /// The value of the first field called `name`. (Compared in place: the parser asks for a
    /// dozen names per entry, and building a key array each time showed in the profile.)
    public func value(_ name: StaticString) -> [UInt8]? {
        let key = UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount)
        return fields.first { $0.name.elementsEqual(key) }?.value
    }

    /// How many fields are called `name`.
    func count(_ name: StaticString) -> Int {
        let key = UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount)
        return fields.reduce(0) { $0 + ($1.name.elementsEqual(key) ? 1 : 0) }
    }

    public static func == (a: QueueEntry, b: QueueEntry) -> Bool {
        a.entryID == b.entryID && a.deliveries == b.deliveries && a.fields.count == b.fields.count
            && zip(a.fields, b.fields).allSatisfy { $0.name == $1.name && $0.value == $1.value }
    }
}
