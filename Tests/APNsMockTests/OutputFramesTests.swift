import Testing
@testable import APNsMock

/// The frames waiting for TLS, in memory: how they are cut into records.
@Suite(.timeLimit(.minutes(1))) struct OutputFramesTests {
    func append(_ out: inout OutputFrames, _ bytes: [UInt8]) {
        bytes.withUnsafeBytes { out.append($0.baseAddress!, $0.count) }
    }

    /// Lengths of the writes that empty `out`, each written in full.
    func writes(_ out: inout OutputFrames, recordPerAnswer: Bool) -> [Int] {
        var lengths: [Int] = []
        while !out.isEmpty {
            let n = out.nextWrite(recordPerAnswer: recordPerAnswer)
            lengths.append(n)
            out.wrote(n)
        }
        return lengths
    }

    static let headers1 = FrameScannerTests.frame(type: 1, stream: 1, payload: 20)
    static let data1 = FrameScannerTests.frame(type: 0, stream: 1, payload: 30)
    static let headers3 = FrameScannerTests.frame(type: 1, stream: 3, payload: 20)
    static let windowUpdate = FrameScannerTests.frame(type: 8, stream: 0, payload: 4)
    static let headers5 = FrameScannerTests.frame(type: 1, stream: 5, payload: 20)

    @Test("One record per answer: HEADERS with the frames after it up to the next HEADERS")
    func recordPerAnswer() {
        var out = OutputFrames(capacity: 1024)
        defer { out.deallocate() }
        for f in [Self.headers1, Self.data1, Self.headers3, Self.windowUpdate, Self.headers5] { append(&out, f) }
        #expect(writes(&out, recordPerAnswer: true) == [29 + 39, 29 + 13, 29])
    }

    @Test("Undelayed answers go in one write")
    func oneWrite() {
        var out = OutputFrames(capacity: 1024)
        defer { out.deallocate() }
        for f in [Self.headers1, Self.data1, Self.headers3] { append(&out, f) }
        #expect(writes(&out, recordPerAnswer: false) == [29 + 39 + 29])
    }

    @Test("A write that had to wait is retried no shorter, and a partial write resumes inside its record")
    func retryNoShorter() {
        var out = OutputFrames(capacity: 1024)
        defer { out.deallocate() }
        for f in [Self.headers1, Self.headers3, Self.headers5] { append(&out, f) }
        // A whole batch had to wait: even one record per answer now, the retry takes it all.
        let batch = out.nextWrite(recordPerAnswer: false)
        out.mustRetry(length: batch)
        #expect(out.nextWrite(recordPerAnswer: true) == 87)
        out.wrote(40)
        #expect(out.nextWrite(recordPerAnswer: true) == 47, "the rest of the retried write")
        out.wrote(47)
        #expect(out.isEmpty)
        out.clear()
        for f in [Self.headers1, Self.headers3] { append(&out, f) }
        #expect(writes(&out, recordPerAnswer: true) == [29, 29], "cleared: records again")
    }

    @Test("A frame cut at the end of the buffer goes with its record; the buffer grows past its capacity")
    func cutFrameAndGrowth() {
        var out = OutputFrames(capacity: 16)
        defer { out.deallocate() }
        append(&out, Self.headers1)
        append(&out, Array(Self.headers3[0..<12]))
        #expect(out.nextWrite(recordPerAnswer: true) == 29)
        out.wrote(29)
        #expect(out.nextWrite(recordPerAnswer: true) == 12)
        #expect(out.end == 41)
        #expect(Array(UnsafeRawBufferPointer(start: out.base, count: 29)) == Self.headers1)
    }
}
