#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import APNsMock

/// The buffer between the mock's TLS and its socket, on a real (non-blocking) socket pair: what
/// it takes is written in order, a full socket makes it wait (and TLS retry), a closed peer is
/// a failure.
@Suite(.timeLimit(.minutes(1))) struct MockSocketWriterTests {
    /// A non-blocking stream socket pair: (the writer's end, the reader's end).
    func socketPair() throws -> (Int32, Int32) {
        var fds: [Int32] = [0, 0]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
        for fd in fds { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
        return (fds[0], fds[1])
    }

    /// Reads everything the reader's end has now.
    func readAll(_ fd: Int32) -> [UInt8] {
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n <= 0 { return out }
            out.append(contentsOf: chunk[0..<n])
        }
    }

    @Test("Records are kept until drained, then reach the socket in order; a full socket makes appends wait")
    func fillsWaitsAndDrains() throws {
        let (w, r) = try socketPair()
        defer { close(w); close(r) }
        let writer = MockSocketWriter(fd: w, capacity: 4096)
        var sent: [UInt8] = []
        var refused = false
        // 100-byte "records" numbered by their first byte, until neither the buffer nor the
        // socket takes more.
        for i in 0..<100_000 {
            let record = [UInt8](repeating: UInt8(truncatingIfNeeded: i), count: 100)
            let taken = record.withUnsafeBytes { writer.append($0.baseAddress!, $0.count) }
            if taken < record.count {
                // A record is taken whole or in part; keep what went in, in order.
                sent.append(contentsOf: record[0..<taken])
                refused = true
                break
            }
            sent.append(contentsOf: record)
        }
        #expect(refused, "a full socket and buffer must refuse a write, or the rest of one")
        #expect(!writer.failed)
        #expect(writer.pending > 0)
        #expect(writer.drain() == .wouldBlock)
        var received: [UInt8] = []
        for _ in 0..<10_000 where writer.pending > 0 || received.count < sent.count {
            received.append(contentsOf: readAll(r))
            _ = writer.drain()
        }
        #expect(writer.drain() == .done)
        #expect(received == sent)
    }

    @Test("A write larger than the whole buffer is taken in pieces, in order, as the socket drains")
    func writeLargerThanTheBuffer() throws {
        let (w, r) = try socketPair()
        defer { close(w); close(r) }
        let writer = MockSocketWriter(fd: w, capacity: 4096)
        let big = (0..<50_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        var offset = 0
        var received: [UInt8] = []
        var stalls = 0
        while offset < big.count && stalls < 10_000 {
            let taken = big.withUnsafeBytes { writer.append($0.baseAddress! + offset, big.count - offset) }
            #expect(!writer.failed)
            if taken == 0 { stalls += 1 } else { offset += taken }
            received.append(contentsOf: readAll(r))
        }
        while writer.pending > 0 && stalls < 20_000 {
            _ = writer.drain()
            received.append(contentsOf: readAll(r))
            stalls += 1
        }
        #expect(offset == big.count, "every byte taken")
        #expect(received == big)
    }

    @Test("A peer that is gone makes the writer fail, not wait")
    func peerGone() throws {
        let (w, r) = try socketPair()
        defer { close(w) }
        close(r)
        let writer = MockSocketWriter(fd: w, capacity: 4096)
        let byte: [UInt8] = [1]
        #expect(byte.withUnsafeBytes { writer.append($0.baseAddress!, 1) } == 1)
        #expect(writer.drain() == .failed)
        #expect(writer.failed)
    }
}
