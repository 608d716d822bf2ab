import Foundation
import PushCore
import Testing

/// The package's one UUID value (the Swift API's `APNsID`, the worker machine's apns-ids, the
/// generator's text): its text against Foundation's, read back, decoded without checks.
@Suite("UUID128", .timeLimit(.minutes(1)))
struct UUID128Tests {
    /// Foundation's text of the same 128 bits: an independent writer to check ours against.
    private static func foundationText(_ id: UUID128) -> String {
        var bytes = [UInt8](repeating: 0, count: 16)
        for i in 0..<8 {
            bytes[i] = UInt8(truncatingIfNeeded: id.high >> UInt64(56 - 8 * i))
            bytes[8 + i] = UInt8(truncatingIfNeeded: id.low >> UInt64(56 - 8 * i))
        }
        let uuid = bytes.withUnsafeBytes { $0.loadUnaligned(as: uuid_t.self) }
        return UUID(uuid: uuid).uuidString.lowercased()
    }

    @Test("its text is Foundation's, lowercase, the same through every writer")
    func text() {
        var g = SystemRandomNumberGenerator()
        for bits in [(UInt64(0), UInt64(0)), (.max, .max), (0x0123_4567_89AB_CDEF, 0xFEDC_BA98_7654_3210)] + (0..<500).map({ _ in (g.next(), g.next()) }) {
            let id = UUID128(high: bits.0, low: bits.1)
            let text = id.description
            #expect(text == Self.foundationText(id))
            #expect(id.withASCII { String(decoding: $0, as: UTF8.self) } == text)
            var out = [UInt8](repeating: 0, count: 36)
            out.withUnsafeMutableBytes { id.write(to: $0.baseAddress!) }
            #expect(String(decoding: out, as: UTF8.self) == text)
        }
    }

    @Test("it reads its canonical text in either case, and nothing else")
    func reading() {
        let id = UUID128("123E4567-E89B-12D3-A456-426614174000")
        #expect(id == UUID128(high: 0x123E_4567_E89B_12D3, low: 0xA456_4266_1417_4000))
        #expect(UUID128("123e4567e89b12d3a456426614174000") == nil && UUID128("not a uuid") == nil)
        #expect(UUID128("123e4567-e89b-12d3-a456-42661417400g") == nil && UUID128("123e4567-e89b-12d3-a456_426614174000") == nil)
        for _ in 0..<1000 {
            let r = UUID128.random()
            #expect(r.high >> 12 & 0xF == 4 && r.low >> 62 == 2, "version 4, RFC 4122 variant")
            for text in [r.description, r.description.uppercased()] {
                #expect(UUID128(text) == r)
                let decoded = Array(text.utf8).withUnsafeBytes { UUID128(trustedASCII: $0) }
                #expect(decoded == r, "\(text)")
            }
        }
        #expect([UInt8](repeating: 0x61, count: 35).withUnsafeBytes { UUID128(trustedASCII: $0) } == UUID128(high: 0, low: 0))
    }

    @Test("the generator's ids are version-4 values of this type")
    func generated() {
        var g = UUIDGenerator(seed: 7)
        for _ in 0..<1000 {
            let text = g.string()
            let id = UUID128(text)
            #expect(id?.description == text)
            #expect(id.map { $0.high >> 12 & 0xF == 4 && $0.low >> 62 == 2 } == true, "\(text)")
        }
    }
}
