@testable import SwiftPushWorker
@testable import SwiftPushWorkerMachine
@testable import SwiftPushWorkerRedis
import Testing

/// The batch entry's array scanner: the word-at-a-time string scan against the byte-by-byte
/// rule it replaces, and strings whose quote, escape or control character falls anywhere in or
/// across an 8-byte word.
@Suite("BatchScanner", .timeLimit(.minutes(1)))
struct BatchScannerTests {
    @Test("specialBytes flags a word exactly when a byte of it is a quote, a backslash or below 0x20, the lowest flag at the first such byte")
    func wordTest() {
        var g = SystemRandomNumberGenerator()
        let special: [UInt8] = [0x22, 0x5C, 0x00, 0x1F, 0x0A]
        let ordinary: [UInt8] = [0x20, 0x21, 0x23, 0x41, 0x5B, 0x5D, 0x7F, 0x80, 0xC3, 0xFF]
        for _ in 0..<20_000 {
            var bytes = (0..<8).map { _ in ordinary[Int.random(in: 0..<ordinary.count, using: &g)] }
            if Bool.random(using: &g) { bytes[Int.random(in: 0..<8, using: &g)] = special[Int.random(in: 0..<special.count, using: &g)] }
            if Int.random(in: 0..<4, using: &g) == 0 { bytes = (0..<8).map { _ in UInt8.random(in: 0...255, using: &g) } }
            let word = bytes.enumerated().reduce(UInt64(0)) { $0 | UInt64($1.element) << (8 * UInt64($1.offset)) }
            let first = bytes.firstIndex { $0 == 0x22 || $0 == 0x5C || $0 < 0x20 }
            let flagged = BatchScanner.specialBytes(word)
            #expect((flagged != 0) == (first != nil), "\(bytes)")
            if let first { #expect(flagged.trailingZeroBitCount >> 3 == first, "\(bytes)") }
        }
    }

    @Test("Strings of every length up to 40, with the closing quote and an escape at every offset, scan to the same members")
    func stringsAtEveryOffset() throws {
        for length in 0...40 {
            let text = String(repeating: "a", count: length)
            for escapeAt in [-1] + Array(0..<length) {
                var value = text
                if escapeAt >= 0 { value.insert(contentsOf: "\\n", at: value.index(value.startIndex, offsetBy: escapeAt)) }
                let json = #"[{"id":"\#(value)","token":"ab"},{"id":"x"}]"#
                let bytes = Array(json.utf8)
                let got = bytes.withUnsafeBytes { BatchScanner.scan($0, base: 0, maxElements: 10) }
                guard case .success(let e) = got else { Issue.record("\(json): \(got)"); continue }
                #expect(e.count == 2)
                let id = try #require(e.element(0).first)
                #expect(id.isString && id.escaped == (escapeAt >= 0))
                #expect(String(decoding: bytes[id.value], as: UTF8.self) == "\"\(value)\"")
            }
        }
        // A control character inside a string is refused wherever it falls.
        for at in 0..<20 {
            var raw = Array(#"[{"id":"aaaaaaaaaaaaaaaaaaaaaaaa"}]"#.utf8)
            raw[8 + at] = 0x01
            let got = raw.withUnsafeBytes { BatchScanner.scan($0, base: 0, maxElements: 10) }
            guard case .failure(let f) = got else { Issue.record("accepted a control character at \(at)"); continue }
            #expect(f.message == "a control character in a string" && f.offset == 8 + at)
        }
    }
}
