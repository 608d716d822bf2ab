/// HTTP/2 frames gathered from nghttp2 (`nghttp2_session_mem_send`) and waiting for
/// `SSL_write`, in one buffer that grows when needed; and how they are cut into TLS records.
///
/// Undelayed answers are written as few records as TLS makes of them. Delayed answers are
/// written one record each (`nextWrite(recordPerAnswer: true)`): an answer is a HEADERS frame
/// and what follows it up to the next HEADERS (an error answer's DATA, a WINDOW_UPDATE or
/// GOAWAY ride with the answer before them), as APNs's answers, spread out in time, arrive.
/// A write that had to wait is retried no shorter (OpenSSL requires it), in either mode.
/// No I/O: tested in memory (Tests/APNsMockTests/OutputFramesTests.swift).
struct OutputFrames {
    /// The bytes waiting are `base[start..<end]`.
    private(set) var base: UnsafeMutableRawPointer
    private var capacity: Int
    private(set) var start = 0
    private(set) var end = 0
    /// Where the record being written ends (or a write that had to wait: its retry's end).
    private var recordEnd = 0

    /// An empty buffer of `capacity` bytes (it grows past that when needed).
    init(capacity: Int) {
        self.capacity = capacity
        base = .allocate(byteCount: capacity, alignment: 16)
    }

    /// Frees the buffer (the owner's `deinit`).
    func deallocate() { base.deallocate() }

    /// Nothing waits.
    var isEmpty: Bool { start == end }

    /// Starts over at the front of the buffer (everything was written).
    mutating func clear() {
        start = 0
        end = 0
        recordEnd = 0
    }

    /// Appends `count` bytes, growing the buffer when needed.
    mutating func append(_ bytes: UnsafeRawPointer, _ count: Int) {
        if end + count > capacity {
            let newCapacity = end + count + 64 * 1024
            let bigger = UnsafeMutableRawPointer.allocate(byteCount: newCapacity, alignment: 16)
            bigger.copyMemory(from: base, byteCount: end)
            base.deallocate()
            base = bigger
            capacity = newCapacity
        }
        (base + end).copyMemory(from: bytes, byteCount: count)
        end += count
    }

    /// How many bytes from `start` the next `SSL_write` takes: one answer's record, or all.
    mutating func nextWrite(recordPerAnswer: Bool) -> Int {
        guard recordPerAnswer else { return end - start }
        if start >= recordEnd { recordEnd = answerRecordEnd(from: start) }
        return recordEnd - start
    }

    /// `count` bytes were written.
    mutating func wrote(_ count: Int) { start += count }

    /// A write of `length` bytes had to wait: whichever write comes next goes at least as far.
    mutating func mustRetry(length: Int) { recordEnd = start + length }

    /// The end of the record that starts at `start` (a frame boundary) when each answer is a
    /// record of its own: the first frame and the frames after it up to the next HEADERS frame.
    /// A frame cut at the end of the buffer goes with the record it is part of.
    private func answerRecordEnd(from start: Int) -> Int {
        var p = start
        while end - p >= 9 {
            let h = (base + p).assumingMemoryBound(to: UInt8.self)
            if p > start && h[3] == 1 /* HEADERS */ { return p }
            p += 9 + (Int(h[0]) << 16 | Int(h[1]) << 8 | Int(h[2]))
        }
        return end
    }
}
