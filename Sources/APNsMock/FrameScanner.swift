/// Finds, in the bytes a client sends, the HEADERS frames that open new streams, before nghttp2
/// sees them: the pump stops feeding nghttp2 there when the stream would break the limit
/// (`MockPump.scan`). Reads only the 9-byte frame headers (RFC 9113 §4.1) and skips payloads
/// and the 24-byte client preface, so its cost per request is a few comparisons.
///
/// Reads arrive cut anywhere: a frame header cut off by the end of a read is held and put back
/// in front of the next read (`resume`), which the caller leaves `headroom` bytes free for.
/// No I/O and no nghttp2: tested in memory (Tests/APNsMockTests/FrameScannerTests.swift).
struct FrameScanner {
    /// Bytes the caller keeps free in front of each read, for a held frame header (< 9 bytes).
    static let headroom = 16

    /// What remains of the client preface, and of the current frame's payload.
    private var prefaceLeft = 24
    private var payloadLeft = 0
    /// The start of a frame header cut off by the end of the last read.
    private var held: (UInt64, UInt64) = (0, 0)
    private var heldCount = 0
    /// The highest client stream id seen opening.
    private(set) var highestStream: Int32 = 0

    /// Puts a held frame header back in front of the `count` new bytes at `data` (which has
    /// `headroom` bytes free before it); returns where scanning starts and how many bytes there
    /// are to scan.
    mutating func resume(_ data: UnsafeMutableRawPointer, count: Int) -> (UnsafeMutableRawPointer, Int) {
        let base = data - heldCount
        if heldCount > 0 {
            withUnsafeBytes(of: held) { base.copyMemory(from: $0.baseAddress!, byteCount: heldCount) }
        }
        defer { heldCount = 0 }
        return (base, heldCount + count)
    }

    /// Scans `base[position..<total]` frame header by frame header. Returns the offset of the
    /// next HEADERS frame opening a client stream, with `position` just past its header; or nil
    /// at the end of the bytes, with `position` where the complete bytes end: a frame header
    /// cut off there is held for the next `resume` (and must not be given to nghttp2 yet).
    mutating func nextNewStream(_ base: UnsafeRawPointer, total: Int, position p: inout Int) -> Int? {
        while p < total {
            if prefaceLeft > 0 {
                let k = min(prefaceLeft, total - p)
                prefaceLeft -= k
                p += k
                continue
            }
            if payloadLeft > 0 {
                let k = min(payloadLeft, total - p)
                payloadLeft -= k
                p += k
                continue
            }
            if total - p < 9 {
                heldCount = total - p
                withUnsafeMutableBytes(of: &held) { $0.baseAddress!.copyMemory(from: base + p, byteCount: heldCount) }
                return nil
            }
            let h = (base + p).assumingMemoryBound(to: UInt8.self)
            payloadLeft = Int(h[0]) << 16 | Int(h[1]) << 8 | Int(h[2])
            let streamID = Int32(h[5] & 0x7F) << 24 | Int32(h[6]) << 16 | Int32(h[7]) << 8 | Int32(h[8])
            let start = p
            p += 9
            if h[3] == 1 /* HEADERS */, streamID & 1 == 1, streamID > highestStream {
                highestStream = streamID
                return start
            }
        }
        return nil
    }
}
