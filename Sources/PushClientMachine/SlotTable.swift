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
/// A slot belongs to one thread at a time, and moves between threads only through the hand-off
/// lists (under the hand-off lock): the sending thread from taking it off the free list until it
/// hands it over, then the I/O thread until it publishes the result, then the thread that polls
/// (or the I/O thread calling the result callback) until it goes back to the free list. The
/// fields are grouped by which of those stages writes them, so a field's group names the thread
/// that may touch it; docs/architecture.md, "Threads and ownership".
///
/// Byte buffer layout (offsets in `SlotLayout`): apns-id, apns-unique-id, reason text, raw
/// response body, then the request's variable fields (path, topic, payload, collapse id,
/// expiration digits) packed one after another.
///
/// The groups are stored structs, so `slot.pointee.request.topic.offset` is one load at a fixed
/// offset, as a flat field was; their order keeps the slot at 168 bytes (it was 176 flat).
public struct Slot {
    /// The slot's byte buffer. Grown (never shrunk) only by the sending thread while it fills
    /// the slot (`SlotTable.reserve`); freed, wiped, with the table.
    @usableFromInline package struct Storage {
        @usableFromInline package var buffer: UnsafeMutableRawPointer? = nil
        @usableFromInline package var capacity: Int32 = 0
    }

    /// Intrusive links: queue membership (free, submission, pending, completion) or a
    /// connection's in-flight list (`prev` only there). Written by whoever owns the list the
    /// slot is in: under the hand-off lock for the shared lists, by the I/O thread for its
    /// queues and in-flight lists, by a caller thread for the batches it is filling or reading.
    @usableFromInline package struct Links {
        @usableFromInline package var next: Int32 = -1
        @usableFromInline package var prev: Int32 = -1
    }

    /// A field's bytes in the slot's buffer.
    @usableFromInline package struct BufferRange {
        @usableFromInline package var offset: Int32 = 0
        @usableFromInline package var length: Int32 = 0
        /// `length` bytes from `offset` (empty: both zero).
        @inlinable package init(offset: Int32 = 0, length: Int32 = 0) {
            self.offset = offset
            self.length = length
        }
    }

    /// The notification as the caller handed it, and when: written by the sending thread (send
    /// path, outside the lock, before it hands the slot over), then only read, by the I/O
    /// thread (requests, deadline scans) and by whoever reads the result (`tag`).
    @usableFromInline package struct Request {
        /// The caller's tag, returned with the result.
        @usableFromInline package var tag: UInt64 = 0
        @usableFromInline package var submitNanos: UInt64 = 0
        /// `submitNanos` + the configured deadline: the I/O thread fails the notification then.
        @usableFromInline package var deadlineNanos: UInt64 = 0
        /// The path starts at `SlotLayout.request`.
        @usableFromInline package var pathLength: Int32 = 0
        @usableFromInline package var topic = BufferRange()
        @usableFromInline package var payload = BufferRange()
        @usableFromInline package var collapseID = BufferRange()
        /// The apns-expiration header's digits (length 0: none).
        @usableFromInline package var expiration = BufferRange()
        /// A broadcast's apns-channel-id (length 0: a device notification).
        @usableFromInline package var channelID = BufferRange()
        @usableFromInline package var pushType: Int32 = 0
        @usableFromInline package var priority: Int32 = 10
        /// The apns-id at `SlotLayout.apnsId` is the caller's; otherwise the I/O thread writes
        /// one before the first attempt.
        @usableFromInline package var hasCallerApnsId = false
    }

    /// Sending it: I/O thread only, once the slot is handed over (the sending thread zeroes it
    /// before; the result reader reads `attempts` and `unprocessedWrites` after).
    @usableFromInline package struct Transmission {
        /// Zero, empty.
        @inlinable package init() {}
        /// Payload bytes nghttp2 has taken of the current attempt.
        @usableFromInline package var payloadSent: Int32 = 0
        @usableFromInline package var attempts: UInt32 = 0
        /// Writes the server said it never processed (REFUSED_STREAM, above a GOAWAY's
        /// last-stream-id): the result's `attempts` leaves them out; `attempts` (and the stats'
        /// `sent`) count every write.
        @usableFromInline package var unprocessedWrites: UInt32 = 0
        /// Attempts that got a retryable answer (429, 5xx, expired token): what the retry budget
        /// (`maxAttempts`) limits. Resends of requests the server never processed (REFUSED_STREAM,
        /// above a GOAWAY's last-stream-id) don't count here; they are bounded by the deadline and
        /// by `RetryPolicy.maxWrites`.
        @usableFromInline package var answeredAttempts: UInt32 = 0
        /// The current attempt's stream (0: none). Which connection carries it is said by the
        /// in-flight list the slot is on (`InFlightList`), not by a field here.
        @usableFromInline package var streamID: Int32 = 0
    }

    /// The server's answer to the latest attempt, then the outcome: written by the I/O thread
    /// (the sending thread zeroes it before the hand-off, and marks a notification accepted
    /// during close cancelled); read, after the result is published, by the thread that polls
    /// or by the result callback. The texts' bytes are in the buffer (`SlotLayout`).
    @usableFromInline package struct Answer {
        /// Zero, empty.
        @inlinable package init() {}
        @usableFromInline package var timestampMs: Int64 = 0
        @usableFromInline package var latencyUs: Int64 = 0
        @usableFromInline package var outcome: Int32 = 0
        @usableFromInline package var status: Int32 = 0
        @usableFromInline package var reason: Int32 = 0
        /// Raw response body bytes at `SlotLayout.body`.
        @usableFromInline package var bodyLength: Int32 = 0
        @usableFromInline package var uniqueIdLength: Int32 = 0
        @usableFromInline package var reasonTextLength: Int32 = 0
    }

    @usableFromInline package var storage = Storage()
    @usableFromInline package var links = Links()
    @usableFromInline package var request = Request()
    @usableFromInline package var transmission = Transmission()
    @usableFromInline package var answer = Answer()
}



/// Fixed offsets inside a slot's byte buffer.
@usableFromInline package enum SlotLayout {
    @usableFromInline package static let apnsId = 0                 // 36 bytes
    @usableFromInline package static let uniqueId = 36              // 36 bytes
    @usableFromInline package static let reasonText = 72            // up to 127 bytes (+ NUL in results)
    @usableFromInline package static let reasonTextCapacity = 127
    @usableFromInline package static let body = 200                 // raw response body, up to 256 bytes
    @usableFromInline package static let bodyCapacity = 256
    @usableFromInline package static let request = 456              // path ("/3/device/<token>") then the rest
    @usableFromInline package static let pathPrefix: StaticString = "/3/device/"
    /// A broadcast's path: this, then the bundle id.
    @usableFromInline package static let broadcastPathPrefix: StaticString = "/4/broadcasts/apps/"
}

/// The slots of one client, created lazily in chunks up to a fixed capacity and addressed by
/// index (indices travel through nghttp2 as stream user data and through the queues as links).
public final class SlotTable: @unchecked Sendable {
    // Usable from inline: the driver (another module) reads slots on its hot path (issue 34);
    // `chunks` is a constant, so reading it needs no exclusivity check (a var would, per use).
    @usableFromInline static let chunkShift = 10
    @usableFromInline static let chunkSize = 1 << chunkShift
    @usableFromInline let chunks: UnsafeMutablePointer<UnsafeMutablePointer<Slot>?>
    private let chunkCount: Int
    /// How many slots may exist.
    public let capacity: Int
    /// How many slots exist so far (guarded by the hand-off lock).
    private(set) var created: Int = 0

    package init(capacity: Int) {
        self.capacity = capacity
        chunkCount = (capacity + Self.chunkSize - 1) / Self.chunkSize
        chunks = .allocate(capacity: chunkCount)
        chunks.initialize(repeating: nil, count: chunkCount)
    }

    deinit {
        for c in 0..<chunkCount {
            guard let chunk = chunks[c] else { continue }
            for i in 0..<Self.chunkSize {
                if let b = chunk[i].storage.buffer {
                    // Payloads may be personal data: wipe before returning memory.
                    memset(b, 0, Int(chunk[i].storage.capacity))
                    free(b)
                }
            }
            chunk.deinitialize(count: Self.chunkSize)
            chunk.deallocate()
        }
        chunks.deallocate()
    }

    /// The slot at `index` (must exist).
    @inlinable @inline(__always)
    package subscript(index: Int32) -> UnsafeMutablePointer<Slot> {
        chunks[Int(index) >> Self.chunkShift]! + (Int(index) & (Self.chunkSize - 1))
    }

    /// Creates one more slot and returns its index, or -1 at capacity. Called under the
    /// hand-off lock.
    package func create() -> Int32 {
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
    @inlinable @inline(__always)
    package static func reserve(_ slot: UnsafeMutablePointer<Slot>, bytes: Int) -> Bool {
        if Int(slot.pointee.storage.capacity) >= bytes { return true }
        let newCapacity = max(1024, (bytes + 255) & ~255)
        guard let b = realloc(slot.pointee.storage.buffer, newCapacity) else { return false }
        slot.pointee.storage.buffer = b
        slot.pointee.storage.capacity = Int32(newCapacity)
        return true
    }
}

/// A FIFO of slots linked through `Slot.links.next`; holds no memory of its own. Its operations
/// are inlinable: the driver's sends and hand-offs use them per notification (issue 34).
@usableFromInline package struct SlotList {
    /// Zero, empty.
    @inlinable package init() {}
    @usableFromInline package var head: Int32 = -1
    @usableFromInline package var tail: Int32 = -1
    @usableFromInline package var count = 0
    /// No slot added since the list was made has an earlier deadline (`Slot.request.deadlineNanos`):
    /// exact while slots are only added, a lower bound after removals. The deadline scan skips
    /// the whole queue while `now` is below it, instead of walking thousands of queued slots
    /// every scan interval (5% of the client's CPU at 50 ms answers, before).
    @usableFromInline package var earliestDeadline: UInt64 = .max

    @inlinable package var isEmpty: Bool { head < 0 }

    @inlinable package mutating func append(_ index: Int32, in table: SlotTable) {
        earliestDeadline = min(earliestDeadline, table[index].pointee.request.deadlineNanos)
        table[index].pointee.links.next = -1
        if tail >= 0 { table[tail].pointee.links.next = index } else { head = index }
        tail = index
        count += 1
    }

    @inlinable package mutating func prepend(_ index: Int32, in table: SlotTable) {
        earliestDeadline = min(earliestDeadline, table[index].pointee.request.deadlineNanos)
        table[index].pointee.links.next = head
        head = index
        if tail < 0 { tail = index }
        count += 1
    }

    @inlinable package mutating func popFirst(in table: SlotTable) -> Int32 {
        let h = head
        guard h >= 0 else { return -1 }
        head = table[h].pointee.links.next
        if head < 0 { tail = -1 }
        count -= 1
        return h
    }

    /// Moves all of `other` to the end of this list in O(1).
    @inlinable package mutating func splice(_ other: inout SlotList, in table: SlotTable) {
        guard !other.isEmpty else { return }
        if tail >= 0 { table[tail].pointee.links.next = other.head } else { head = other.head }
        tail = other.tail
        count += other.count
        earliestDeadline = min(earliestDeadline, other.earliestDeadline)
        other = SlotList()
    }
}
