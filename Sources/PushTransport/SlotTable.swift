#if canImport(Glibc)
import Glibc
#endif
import PushCore

/// One notification's storage, from send until its result is polled.
///
/// Every accepted notification holds exactly one slot, and a slot returns to the free list only
/// after its result has been handed to the caller. So the slot count bounds everything the
/// client holds (queued + in flight + unpolled results), and the steady state allocates nothing:
/// slots and their byte buffers are reused.
///
/// Byte buffer layout (offsets in `SlotLayout`): apns-id, apns-unique-id, reason text, raw
/// response body, then the request's variable fields (path, topic, payload, collapse id,
/// expiration digits) packed one after another.
public struct Slot {
    var buffer: UnsafeMutableRawPointer? = nil
    var capacity: Int32 = 0
    /// Intrusive links: queue membership (free, submission, pending, completion) or a
    /// connection's in-flight list.
    var next: Int32 = -1
    var prev: Int32 = -1

    // Request
    var pathLength: Int32 = 0
    var topicOffset: Int32 = 0
    var topicLength: Int32 = 0
    var payloadOffset: Int32 = 0
    var payloadLength: Int32 = 0
    var collapseOffset: Int32 = 0
    var collapseLength: Int32 = 0
    var expirationOffset: Int32 = 0
    var expirationLength: Int32 = 0
    /// A broadcast's apns-channel-id (length 0: a device notification).
    var channelOffset: Int32 = 0
    var channelLength: Int32 = 0
    var pushType: Int32 = 0
    var priority: Int32 = 10
    var hasCallerApnsId = false
    var tag: UInt64 = 0
    var submitNanos: UInt64 = 0
    var deadlineNanos: UInt64 = 0

    // Progress
    var payloadSent: Int32 = 0
    var attempts: UInt32 = 0
    /// Writes the server said it never processed (REFUSED_STREAM, above a GOAWAY's
    /// last-stream-id): the result's `attempts` leaves them out; `attempts` (and the stats'
    /// `sent`) count every write.
    var unprocessedWrites: UInt32 = 0
    /// Attempts that got a retryable answer (429, 5xx, expired token): what the retry budget
    /// (`maxAttempts`) limits. Resends of requests the server never processed (REFUSED_STREAM,
    /// above a GOAWAY's last-stream-id) don't count here; they are bounded by the deadline and
    /// by `RetryPolicy.maxWrites`.
    var answeredAttempts: UInt32 = 0
    var streamID: Int32 = 0
    var connection: Int32 = -1

    // Result
    var outcome: Int32 = 0
    var status: Int32 = 0
    var reason: Int32 = 0
    var timestampMs: Int64 = 0
    var latencyUs: Int64 = 0
    var bodyLength: Int32 = 0
    var uniqueIdLength: Int32 = 0
    var reasonTextLength: Int32 = 0
}



/// Fixed offsets inside a slot's byte buffer.
enum SlotLayout {
    static let apnsId = 0                 // 36 bytes
    static let uniqueId = 36              // 36 bytes
    static let reasonText = 72            // up to 127 bytes (+ NUL in results)
    static let reasonTextCapacity = 127
    static let body = 200                 // raw response body, up to 256 bytes
    static let bodyCapacity = 256
    static let request = 456              // path ("/3/device/<token>") then the rest
    static let pathPrefix: StaticString = "/3/device/"
    /// A broadcast's path: this, then the bundle id.
    static let broadcastPathPrefix: StaticString = "/4/broadcasts/apps/"
}

/// The slots of one client, created lazily in chunks up to a fixed capacity and addressed by
/// index (indices travel through nghttp2 as stream user data and through the queues as links).
public final class SlotTable: @unchecked Sendable {
    private static let chunkShift = 10
    private static let chunkSize = 1 << chunkShift
    private var chunks: UnsafeMutablePointer<UnsafeMutablePointer<Slot>?>
    private let chunkCount: Int
    /// How many slots may exist.
    public let capacity: Int
    /// How many slots exist so far (guarded by the hand-off lock).
    private(set) var created: Int = 0

    init(capacity: Int) {
        self.capacity = capacity
        chunkCount = (capacity + Self.chunkSize - 1) / Self.chunkSize
        chunks = .allocate(capacity: chunkCount)
        chunks.initialize(repeating: nil, count: chunkCount)
    }

    deinit {
        for c in 0..<chunkCount {
            guard let chunk = chunks[c] else { continue }
            for i in 0..<Self.chunkSize {
                if let b = chunk[i].buffer {
                    // Payloads may be personal data: wipe before returning memory.
                    memset(b, 0, Int(chunk[i].capacity))
                    free(b)
                }
            }
            chunk.deinitialize(count: Self.chunkSize)
            chunk.deallocate()
        }
        chunks.deallocate()
    }

    /// The slot at `index` (must exist).
    @inline(__always)
    subscript(index: Int32) -> UnsafeMutablePointer<Slot> {
        chunks[Int(index) >> Self.chunkShift]! + (Int(index) & (Self.chunkSize - 1))
    }

    /// Creates one more slot and returns its index, or -1 at capacity. Called under the
    /// hand-off lock.
    func create() -> Int32 {
        guard created < capacity else { return -1 }
        let c = created >> Self.chunkShift
        if chunks[c] == nil {
            let chunk = UnsafeMutablePointer<Slot>.allocate(capacity: Self.chunkSize)
            chunk.initialize(repeating: Slot(), count: Self.chunkSize)
            chunks[c] = chunk
        }
        created += 1
        return Int32(created - 1)
    }

    /// Ensures the slot's buffer holds at least `bytes`; returns false when memory ran out.
    /// Buffers only grow, so a steady workload stops allocating.
    @inline(__always)
    static func reserve(_ slot: UnsafeMutablePointer<Slot>, bytes: Int) -> Bool {
        if Int(slot.pointee.capacity) >= bytes { return true }
        let newCapacity = max(1024, (bytes + 255) & ~255)
        guard let b = realloc(slot.pointee.buffer, newCapacity) else { return false }
        slot.pointee.buffer = b
        slot.pointee.capacity = Int32(newCapacity)
        return true
    }
}

/// A FIFO of slots linked through `Slot.next`; holds no memory of its own.
struct SlotList {
    var head: Int32 = -1
    var tail: Int32 = -1
    var count = 0
    /// No slot added since the list was made has an earlier deadline (`Slot.deadlineNanos`):
    /// exact while slots are only added, a lower bound after removals. The deadline scan skips
    /// the whole queue while `now` is below it, instead of walking thousands of queued slots
    /// every scan interval (5% of the client's CPU at 50 ms answers, before).
    private(set) var earliestDeadline: UInt64 = .max

    var isEmpty: Bool { head < 0 }

    mutating func append(_ index: Int32, in table: SlotTable) {
        earliestDeadline = min(earliestDeadline, table[index].pointee.deadlineNanos)
        table[index].pointee.next = -1
        if tail >= 0 { table[tail].pointee.next = index } else { head = index }
        tail = index
        count += 1
    }

    mutating func prepend(_ index: Int32, in table: SlotTable) {
        earliestDeadline = min(earliestDeadline, table[index].pointee.deadlineNanos)
        table[index].pointee.next = head
        head = index
        if tail < 0 { tail = index }
        count += 1
    }

    mutating func popFirst(in table: SlotTable) -> Int32 {
        let h = head
        guard h >= 0 else { return -1 }
        head = table[h].pointee.next
        if head < 0 { tail = -1 }
        count -= 1
        return h
    }

    /// Moves all of `other` to the end of this list in O(1).
    mutating func splice(_ other: inout SlotList, in table: SlotTable) {
        guard !other.isEmpty else { return }
        if tail >= 0 { table[tail].pointee.next = other.head } else { head = other.head }
        tail = other.tail
        count += other.count
        earliestDeadline = min(earliestDeadline, other.earliestDeadline)
        other = SlotList()
    }
}
