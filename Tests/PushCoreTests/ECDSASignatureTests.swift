import PushCore
import PushCrypto
import Testing

@Suite("ECDSASignature", .timeLimit(.minutes(1)))
struct ECDSASignatureTests {
    @Test("Raw r||s converts to DER and back unchanged, including leading zero bytes")
    func roundTrips() throws {
        var samples: [[UInt8]] = (0..<20).map { _ in randomBytes(64) }
        samples.append([UInt8](repeating: 0, count: 31) + [1] + [UInt8](repeating: 0, count: 31) + [1])
        samples.append([0x00, 0x00, 0x80] + randomBytes(29) + [0xFF] + randomBytes(31))
        samples.append([UInt8](repeating: 0xFF, count: 64))
        for raw in samples {
            let der = try #require(ECDSASignature.rawToDER(raw))
            #expect(der.first == 0x30, "DER SEQUENCE")
            #expect(ECDSASignature.derToRaw(der) == raw)
        }
    }

    @Test("r = 1, s = 1 encodes as the minimal DER SEQUENCE of two INTEGERs")
    func encodesMinimalDER() {
        let raw = [UInt8](repeating: 0, count: 31) + [1] + [UInt8](repeating: 0, count: 31) + [1]
        #expect(ECDSASignature.rawToDER(raw) == [0x30, 0x06, 0x02, 0x01, 0x01, 0x02, 0x01, 0x01])
    }

    @Test("A high bit in r or s gets a 0x00 sign byte in DER")
    func addsSignByte() throws {
        let raw = [UInt8](repeating: 0x80, count: 64)
        let der = try #require(ECDSASignature.rawToDER(raw))
        #expect(der.count == 2 + 2 * (2 + 33))
        #expect(Array(der[2..<5]) == [0x02, 0x21, 0x00])
    }

    @Test("rawToDER refuses anything but 64 bytes", arguments: [0, 1, 32, 63, 65, 128])
    func rawMustBe64Bytes(count: Int) {
        #expect(ECDSASignature.rawToDER(randomBytes(count)) == nil)
    }

    @Test("derToRaw refuses malformed DER")
    func rejectsMalformedDER() {
        #expect(ECDSASignature.derToRaw([]) == nil)
        #expect(ECDSASignature.derToRaw([0x30, 0x06, 0x02, 0x01, 0x01]) == nil)
        #expect(ECDSASignature.derToRaw(utf8("not DER at all")) == nil)
    }

    @Test("derToRaw refuses integers wider than 256 bits")
    func rejectsOversizedIntegers() {
        // r is 33 significant bytes (0x01 then 32 bytes): too large for P-256.
        let r: [UInt8] = [0x02, 0x21, 0x01] + [UInt8](repeating: 0x11, count: 32)
        let s: [UInt8] = [0x02, 0x01, 0x01]
        let der: [UInt8] = [0x30, UInt8(r.count + s.count)] + r + s
        #expect(ECDSASignature.derToRaw(der) == nil)
    }
}
