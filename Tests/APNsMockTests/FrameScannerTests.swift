import Testing
@testable import APNsMock

/// The frame scanner on bytes built in memory: it finds the HEADERS frames that open client
/// streams, however the bytes are cut into reads.
@Suite(.timeLimit(.minutes(1))) struct FrameScannerTests {
    /// A frame: 9-byte header (RFC 9113 §4.1) and `payload` zero bytes.
    static func frame(type: UInt8, stream: Int32, payload: Int) -> [UInt8] {
        let s = UInt32(stream)
        return [UInt8(payload >> 16 & 0xFF), UInt8(payload >> 8 & 0xFF), UInt8(payload & 0xFF), type, 0,
                UInt8(s >> 24 & 0x7F), UInt8(s >> 16 & 0xFF), UInt8(s >> 8 & 0xFF), UInt8(s & 0xFF)]
            + [UInt8](repeating: 0, count: payload)
    }

    /// A client's bytes: the preface, SETTINGS, then streams 1, 3 and 5 with bodies, a
    /// WINDOW_UPDATE, trailers on stream 3 (not a new stream), a stream id going backwards and an
    /// even one (neither is new), and stream 7.
    static let clientBytes: [UInt8] = {
        var b = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)
        b += frame(type: 4, stream: 0, payload: 12)        // SETTINGS
        b += frame(type: 1, stream: 1, payload: 40)        // HEADERS 1
        b += frame(type: 0, stream: 1, payload: 200)       // DATA 1
        b += frame(type: 1, stream: 3, payload: 7)         // HEADERS 3
        b += frame(type: 8, stream: 0, payload: 4)         // WINDOW_UPDATE
        b += frame(type: 1, stream: 3, payload: 5)         // trailers on 3
        b += frame(type: 1, stream: 5, payload: 300)       // HEADERS 5
        b += frame(type: 1, stream: 1, payload: 3)         // backwards
        b += frame(type: 1, stream: 6, payload: 3)         // even: not a client stream
        b += frame(type: 0, stream: 5, payload: 70_000)    // DATA 5, larger than a read
        b += frame(type: 1, stream: 7, payload: 0)         // HEADERS 7
        return b
    }()

    /// Scans `bytes` in reads of the given sizes (the last one takes the rest); returns the
    /// stream ids found opening, and every byte marked complete, in order.
    func scan(_ bytes: [UInt8], reads: [Int]) -> (streams: [Int32], complete: [UInt8]) {
        var scanner = FrameScanner()
        var streams: [Int32] = []
        var complete: [UInt8] = []
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: FrameScanner.headroom + bytes.count, alignment: 16)
        defer { buffer.deallocate() }
        var at = 0
        var sizes = reads
        while at < bytes.count {
            let n = sizes.isEmpty ? bytes.count - at : min(sizes.removeFirst(), bytes.count - at)
            bytes[at..<(at + n)].withUnsafeBytes { (buffer + FrameScanner.headroom).copyMemory(from: $0.baseAddress!, byteCount: n) }
            at += n
            let (base, total) = scanner.resume(buffer + FrameScanner.headroom, count: n)
            var p = 0
            while let headers = scanner.nextNewStream(base, total: total, position: &p) {
                let h = (base + headers).assumingMemoryBound(to: UInt8.self)
                streams.append(Int32(h[5] & 0x7F) << 24 | Int32(h[6]) << 16 | Int32(h[7]) << 8 | Int32(h[8]))
            }
            complete += UnsafeRawBufferPointer(start: base, count: p)
        }
        return (streams, complete)
    }

    @Test("New client streams are found, not trailers, old ids or server ids; every byte is passed on")
    func wholeInput() {
        let r = scan(Self.clientBytes, reads: [])
        #expect(r.streams == [1, 3, 5, 7])
        #expect(r.complete == Self.clientBytes)
    }

    @Test("Cut into reads anywhere (inside the preface, a frame header, a payload), the same streams are found")
    func everyCut() {
        let expected: [Int32] = [1, 3, 5, 7]
        for cut in 1..<300 {
            let r = scan(Self.clientBytes, reads: [cut, 1, 9, cut])
            #expect(r.streams == expected, "cut at \(cut)")
            #expect(r.complete == Self.clientBytes, "cut at \(cut)")
        }
    }

    @Test("A frame header cut off at the end of a read is held back, then put in front of the next read")
    func heldHeader() {
        var scanner = FrameScanner()
        let preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)
        let headers = Self.frame(type: 1, stream: 1, payload: 0)
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: FrameScanner.headroom + 64, alignment: 16)
        defer { buffer.deallocate() }
        let first = preface + headers[0..<4]
        first.withUnsafeBytes { (buffer + FrameScanner.headroom).copyMemory(from: $0.baseAddress!, byteCount: first.count) }
        var (base, total) = scanner.resume(buffer + FrameScanner.headroom, count: first.count)
        var p = 0
        #expect(scanner.nextNewStream(base, total: total, position: &p) == nil)
        #expect(p == preface.count, "the partial header is not passed on")
        let rest = Array(headers[4...])
        rest.withUnsafeBytes { (buffer + FrameScanner.headroom).copyMemory(from: $0.baseAddress!, byteCount: rest.count) }
        (base, total) = scanner.resume(buffer + FrameScanner.headroom, count: rest.count)
        #expect(total == 9 && base == buffer + FrameScanner.headroom - 4)
        p = 0
        #expect(scanner.nextNewStream(base, total: total, position: &p) == 0)
        #expect(p == 9 && scanner.highestStream == 1)
    }
}
