/// A connection's request streams: the `MockStream` objects it made (kept for its whole life
/// and reused, so a request in steady state allocates nothing), which are free, how many are
/// open, and the one whose header block is arriving.
struct MockStreamPool {
    /// Every stream object made (owning): timers, nghttp2 and the lists below refer to them
    /// unretained, so taking a stream and giving it back costs no reference counting.
    private var all: [MockStream] = []
    private var free: [Unmanaged<MockStream>] = []
    private var nextSerial: UInt64 = 0
    /// Request streams open now, and the most there were at once.
    private(set) var open = 0
    private(set) var peak = 0
    /// The stream whose header block is arriving (header blocks are never interleaved, RFC 9113
    /// §4.3), so `on_header` needs no lookup.
    var receivingHeaders: Unmanaged<MockStream>?

    /// A request stream `id` opened: a stream object reset for it, now receiving headers.
    /// `newPeak` when more streams are open than ever before on this connection.
    mutating func open(_ id: Int32) -> (stream: Unmanaged<MockStream>, newPeak: Bool) {
        let stream = free.popLast() ?? make()
        nextSerial &+= 1
        stream._withUnsafeGuaranteedRef { $0.reset(streamID: id, serial: nextSerial) }
        receivingHeaders = stream
        open += 1
        guard open > peak else { return (stream, false) }
        peak = open
        return (stream, true)
    }

    private mutating func make() -> Unmanaged<MockStream> {
        let s = MockStream()
        all.append(s)
        return .passUnretained(s)
    }

    /// `stream` closed: back to the free list.
    mutating func close(_ stream: MockStream) {
        let s = Unmanaged.passUnretained(stream)
        if receivingHeaders?.toOpaque() == s.toOpaque() { receivingHeaders = nil }
        open -= 1
        free.append(s)
    }
}
