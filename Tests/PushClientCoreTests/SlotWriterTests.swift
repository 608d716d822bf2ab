import Testing
@testable import PushClientCore
@testable import PushClientMachine

/// How a request is laid out in a slot's buffer: fields one after another from
/// `SlotLayout.request`, each range saying where its bytes went.
@Suite("Slot writer", .timeLimit(.minutes(1)))
struct SlotWriterTests {
    /// The bytes of `range` in `buffer`, as text.
    func text(_ buffer: UnsafeMutableRawPointer, _ range: Slot.BufferRange) -> String {
        String(decoding: UnsafeRawBufferPointer(start: buffer + Int(range.offset), count: Int(range.length)), as: UTF8.self)
    }

    @Test("Fields follow each other from the request offset; an empty field takes no room; the path length is what was put first")
    func fieldsInOrder() {
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: 1024, alignment: 8)
        defer { buffer.deallocate() }
        var w = SlotWriter(buffer: buffer)
        w.put(SlotLayout.pathPrefix)
        let token = Array("00fc13ad".utf8)
        _ = token.withUnsafeBytes { w.put($0) }
        #expect(w.written == Int32(SlotLayout.pathPrefix.utf8CodeUnitCount + token.count))
        #expect(String(decoding: UnsafeRawBufferPointer(start: buffer + SlotLayout.request, count: Int(w.written)), as: UTF8.self) == "/3/device/00fc13ad")
        let topic = Array("com.example.app".utf8).withUnsafeBytes { w.put($0) }
        let none = w.put(UnsafeRawBufferPointer(start: nil, count: 0))
        let payload = Array("{}".utf8).withUnsafeBytes { w.put($0) }
        #expect(topic.offset == Int32(SlotLayout.request) + w.written - 15 - 2)
        #expect(text(buffer, topic) == "com.example.app")
        #expect(none.length == 0 && none.offset == topic.offset + topic.length)
        #expect(payload.offset == none.offset && text(buffer, payload) == "{}")
        #expect(w.empty.offset == payload.offset + payload.length && w.empty.length == 0)
    }

    @Test("Decimals are written in full, negative ones as 0", arguments: [
        (Int64(0), "0"), (7, "7"), (1_700_000_000, "1700000000"), (Int64.max, "9223372036854775807"), (-5, "0"),
    ])
    func decimals(value: Int64, digits: String) {
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: 1024, alignment: 8)
        defer { buffer.deallocate() }
        var w = SlotWriter(buffer: buffer)
        w.put("x")
        let range = w.putDecimal(value)
        #expect(range.offset == Int32(SlotLayout.request + 1))
        #expect(text(buffer, range) == digits)
        #expect(w.empty.offset == range.offset + range.length)
    }
}
