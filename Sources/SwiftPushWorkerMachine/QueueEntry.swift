#if canImport(Glibc)
import Glibc
#endif

/// One stream entry as read from the queue: its stream id (`1700000000000-0`) and its fields in
/// the order the producer gave them. Field names and values are bytes: nothing is assumed about
/// what a producer wrote until `EntryReader` has checked it.
///
/// The fields live in one byte array, names and values back to back, with their end offsets in
/// a second: two allocations per entry instead of two per field (a batch of a thousand entries
/// of six fields each was twelve thousand arrays to make and free, which showed in the worker's
/// profile). Values are handed out as slices of that storage, never copied.
public struct QueueEntry: Sendable, Equatable {
    /// The entry's id in the stream (what XACK takes).
    public let entryID: String
    /// Every field's name and value, back to back, in order (values are ranges of it:
    /// `range(of:)`).
    let bytes: [UInt8]
    /// Per field, the end of its name and the end of its value in `bytes` (the name starts where
    /// the previous value ended).
    private let ends: [Int32]
    /// How many times the queue has delivered it (1 on a first read; higher after reclaims).
    public var deliveries: Int
    /// Of those deliveries, how many a holder recorded as written (`QueueRequest.markWritten`:
    /// a request of the entry reached APNs's connection in that life). 0 on a first read.
    public var written = 0

    /// An entry with `fields`.
    public init(entryID: String, fields: [(name: [UInt8], value: [UInt8])], deliveries: Int = 1) {
        var packer = Packer(fieldCount: fields.count, byteCount: fields.reduce(0) { $0 + $1.name.count + $1.value.count })
        for f in fields {
            packer.append(f.name)
            packer.append(f.value)
        }
        self.init(entryID: entryID, packer: packer, deliveries: deliveries)
    }

    /// An entry from string fields (tests, the CLI).
    public init(entryID: String, _ fields: [(String, String)], deliveries: Int = 1) {
        self.init(entryID: entryID, fields: fields.map { (Array($0.0.utf8), Array($0.1.utf8)) }, deliveries: deliveries)
    }

    /// An entry from fields packed by `packer` (names and values appended alternately).
    package init(entryID: String, packer: Packer, deliveries: Int = 1) {
        self.entryID = entryID
        self.bytes = packer.bytes
        self.ends = packer.ends
        self.deliveries = deliveries
    }

    /// Builds the packed storage of an entry: append a name, then its value, field after field.
    /// Its appends are inlinable: the Redis reader (another module) packs every field of every
    /// entry read.
    package struct Packer {
        @usableFromInline var bytes: [UInt8] = []
        @usableFromInline var ends: [Int32] = []

        /// Storage with room for `fieldCount` fields of `byteCount` bytes in all.
        package init(fieldCount: Int, byteCount: Int) {
            bytes.reserveCapacity(byteCount)
            ends.reserveCapacity(fieldCount * 2)
        }

        /// Appends a name or a value (they alternate).
        @inlinable
        package mutating func append(_ part: some Collection<UInt8>) {
            bytes.append(contentsOf: part)
            ends.append(Int32(bytes.count))
        }

        /// Appends a name or a value from raw memory.
        @inlinable
        package mutating func append(_ part: UnsafeRawBufferPointer) {
            bytes.append(contentsOf: part)
            ends.append(Int32(bytes.count))
        }
    }

    /// How many fields the entry has.
    public var fieldCount: Int { ends.count / 2 }

    /// The fields, in order, as arrays (copies: for the rare paths that rebuild an entry).
    public var fields: [(name: [UInt8], value: [UInt8])] {
        (0..<fieldCount).map { (Array(name(at: $0)), Array(value(at: $0))) }
    }

    /// Field `i`'s name.
    private func name(at i: Int) -> ArraySlice<UInt8> {
        bytes[(i == 0 ? 0 : Int(ends[2 * i - 1]))..<Int(ends[2 * i])]
    }

    /// Field `i`'s value.
    private func value(at i: Int) -> ArraySlice<UInt8> {
        bytes[Int(ends[2 * i])..<Int(ends[2 * i + 1])]
    }

    /// Whether field `i` is called `key`.
    private func nameEquals(_ i: Int, _ key: UnsafeBufferPointer<UInt8>) -> Bool {
        let start = i == 0 ? 0 : Int(ends[2 * i - 1])
        let end = Int(ends[2 * i])
        guard end - start == key.count else { return false }
        return bytes.withUnsafeBufferPointer { b in
            key.isEmpty || memcmp(b.baseAddress! + start, key.baseAddress!, key.count) == 0
        }
    }

    /// The value of the first field called `name` (a slice of the entry's storage). Compared in
    /// place: the parser asks for a dozen names per entry.
    public func value(_ name: StaticString) -> ArraySlice<UInt8>? {
        let key = UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount)
        for i in 0..<fieldCount where nameEquals(i, key) { return value(at: i) }
        return nil
    }

    /// Calls `body` with each field's name and value ranges in `bytes`, in order.
    func forEachField(_ body: (Range<Int>, Range<Int>) -> Void) {
        for i in 0..<fieldCount {
            body((i == 0 ? 0 : Int(ends[2 * i - 1]))..<Int(ends[2 * i]), Int(ends[2 * i])..<Int(ends[2 * i + 1]))
        }
    }

    /// Where the value of the first field called `name` lies in `bytes`.
    func range(of name: StaticString) -> Range<Int>? {
        let key = UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount)
        for i in 0..<fieldCount where nameEquals(i, key) { return Int(ends[2 * i])..<Int(ends[2 * i + 1]) }
        return nil
    }

    /// How many fields are called `name`.
    func count(_ name: StaticString) -> Int {
        let key = UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount)
        var n = 0
        for i in 0..<fieldCount where nameEquals(i, key) { n += 1 }
        return n
    }

    public static func == (a: QueueEntry, b: QueueEntry) -> Bool {
        a.entryID == b.entryID && a.deliveries == b.deliveries && a.bytes == b.bytes && a.ends == b.ends
    }
}
