import Foundation
import PushCore
import Testing

@Suite("UUIDGenerator", .timeLimit(.minutes(1)))
struct UUIDGeneratorTests {
    private static let hex = Set("0123456789abcdef".utf8)

    @Test("UUIDs are 36 characters of lowercase hex with dashes at 8, 13, 18 and 23")
    func canonicalFormat() {
        var g = UUIDGenerator()
        for _ in 0..<1000 {
            let u = Array(g.string().utf8)
            #expect(u.count == 36)
            for (i, c) in u.enumerated() {
                if [8, 13, 18, 23].contains(i) {
                    #expect(c == UInt8(ascii: "-"), "offset \(i)")
                } else {
                    #expect(Self.hex.contains(c), "offset \(i)")
                }
            }
        }
    }

    @Test("UUIDs are version 4 with the RFC 4122 variant (8, 9, a or b)")
    func versionAndVariant() {
        var g = UUIDGenerator()
        for _ in 0..<1000 {
            let u = Array(g.string().utf8)
            #expect(u[14] == UInt8(ascii: "4"))
            #expect(Set("89ab".utf8).contains(u[19]))
        }
    }

    @Test("10,000 generated UUIDs are all different")
    func unique() {
        var g = UUIDGenerator()
        let all = (0..<10_000).map { _ in g.string() }
        #expect(Set(all).count == 10_000)
    }

    @Test("Two generators produce different sequences")
    func generatorsDiffer() {
        var a = UUIDGenerator(), b = UUIDGenerator()
        #expect(a.string() != b.string())
    }

    @Test("Generated UUIDs are valid apns-ids and parse as Foundation UUIDs")
    func acceptedElsewhere() {
        var g = UUIDGenerator()
        for _ in 0..<100 {
            let s = g.string()
            #expect(withBytes(s) { NotificationRules.checkApnsId($0) } == nil)
            #expect(UUID(uuidString: s) != nil)
        }
    }

    @Test("write(to:) writes exactly 36 bytes")
    func writesExactly36Bytes() {
        var g = UUIDGenerator()
        var buffer = [UInt8](repeating: 0xEE, count: 40)
        buffer.withUnsafeMutableBytes { g.write(to: $0.baseAddress!) }
        #expect(buffer[36...].allSatisfy { $0 == 0xEE })
        #expect(buffer[..<36].allSatisfy { $0 != 0xEE })
    }

    @Test("Across many UUIDs every random hex digit takes every value")
    func randomDigitsCoverAllValues() {
        var g = UUIDGenerator()
        var seen = [Set<UInt8>](repeating: [], count: 36)
        for _ in 0..<2000 {
            for (i, c) in g.string().utf8.enumerated() { seen[i].insert(c) }
        }
        for i in 0..<36 where ![8, 13, 14, 18, 19, 23].contains(i) {
            #expect(seen[i].count == 16, "offset \(i)")
        }
        #expect(seen[19].count == 4)
    }
}
