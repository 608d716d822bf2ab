import PushClientMachine
import CSwiftPushABI

/// A finished notification's result, read where it lies (its slot) while a poll or the result
/// callback holds the slot. The C ABI copies it into a `push_result` (`PushClient.fillResult`),
/// the Swift API into its own values: one outbox, read into either form.
package struct ResultView {
    private let slot: UnsafeMutablePointer<Slot>

    init(_ slot: UnsafeMutablePointer<Slot>) { self.slot = slot }

    /// The caller's tag.
    @inline(__always) package var tag: UInt64 { slot.pointee.request.tag }
    /// `PUSH_OUTCOME_*`: 1 accepted, 2 rejected, 3 failed.
    @inline(__always) package var outcome: Int32 { slot.pointee.answer.outcome }
    /// The HTTP status of the last answer (0: none).
    @inline(__always) package var status: Int32 { slot.pointee.answer.status }
    /// An `APNsReason` raw value (`PUSH_REASON_*`).
    @inline(__always) package var reason: Int32 { slot.pointee.answer.reason }
    /// A 410's timestamp, in milliseconds since the epoch (0: none).
    @inline(__always) package var timestampMs: Int64 { slot.pointee.answer.timestampMs }
    /// From send to outcome, in microseconds.
    @inline(__always) package var latencyMicros: Int64 { slot.pointee.answer.latencyUs }

    /// Attempts that may have reached APNs: writes the server said it never processed are
    /// left out.
    @inline(__always) package var attempts: UInt32 {
        let attempts = slot.pointee.transmission.attempts
        return attempts - min(slot.pointee.transmission.unprocessedWrites, attempts)
    }

    /// The apns-id (36 bytes: a broadcast's apns-request-id), or empty when the slot has no
    /// buffer (never: every filled slot has one).
    @inline(__always) package var apnsID: UnsafeRawBufferPointer { text(at: SlotLayout.apnsId, count: 36) }
    /// apns-unique-id (36 bytes, the sandbox's), or empty.
    @inline(__always) package var uniqueID: UnsafeRawBufferPointer {
        text(at: SlotLayout.uniqueId, count: Int(slot.pointee.answer.uniqueIdLength))
    }
    /// APNs's reason text, or the library's account of a failure (at most 127 bytes), or empty.
    @inline(__always) package var reasonText: UnsafeRawBufferPointer {
        text(at: SlotLayout.reasonText, count: Int(slot.pointee.answer.reasonTextLength))
    }

    @inline(__always)
    private func text(at offset: Int, count: Int) -> UnsafeRawBufferPointer {
        guard count > 0, let buffer = slot.pointee.storage.buffer else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        return UnsafeRawBufferPointer(start: buffer + offset, count: count)
    }
}

/// Where a poll puts the results it takes, one at a time, while the slots are held: the C
/// ABI's `push_result` records (`CResultRecords`) or the Swift API's values. A protocol (not a
/// closure) so that each reader's poll is specialized: the C one reads each slot straight into
/// the caller's record.
package protocol ResultReader {
    /// Takes one result (it copies what it keeps: the view ends with the call).
    mutating func read(_ result: ResultView)
}

/// The caller's array of `push_result` records, `recordSize` bytes apart (its sizeof: an older,
/// smaller record gets what fits), filled from the first.
struct CResultRecords: ResultReader {
    let out: UnsafeMutableRawPointer
    let recordSize: Int
    /// Records written so far.
    private(set) var count = 0

    init(_ out: UnsafeMutableRawPointer, recordSize: Int) {
        self.out = out
        self.recordSize = recordSize
    }

    @inline(__always)
    mutating func read(_ result: ResultView) {
        PushClient.write(result, to: out + count * recordSize, recordSize: recordSize)
        count += 1
    }
}
