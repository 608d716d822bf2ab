#if canImport(Glibc)
import Glibc
#endif

/// Generates random (version 4) UUIDs as lowercase canonical text, for `apns-id`.
///
/// apns-ids need uniqueness, not secrecy, and one is made per notification, so this uses a
/// xoshiro256** generator seeded once from the kernel instead of a syscall per UUID.
public struct UUIDGenerator {
    private var s0: UInt64, s1: UInt64, s2: UInt64, s3: UInt64
    /// A generator seeded from the system's random source.
    public init() {
        var g = SystemRandomNumberGenerator()
        s0 = g.next(); s1 = g.next(); s2 = g.next(); s3 = g.next()
        if s0 | s1 | s2 | s3 == 0 { s0 = 0x9E37_79B9_7F4A_7C15 }
    }

    /// A generator seeded from `seed` (expanded with SplitMix64): the same seed gives the same
    /// sequence, for tests that need a deterministic random source.
    public init(seed: UInt64) {
        var x = seed
        func splitMix() -> UInt64 {
            x &+= 0x9E37_79B9_7F4A_7C15
            var z = x
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        s0 = splitMix(); s1 = splitMix(); s2 = splitMix(); s3 = splitMix()
        if s0 | s1 | s2 | s3 == 0 { s0 = 0x9E37_79B9_7F4A_7C15 }
    }

    /// A draw in [0, 1) with 53 random bits (the jitter of retry and reconnect delays).
    @inline(__always)
    public mutating func nextUnit() -> Double {
        Double(next() >> 11) * 0x1p-53
    }

    @inline(__always)
    private mutating func next() -> UInt64 {
        let result = ((s1 &* 5) << 7 | (s1 &* 5) >> 57) &* 9
        let t = s1 << 17
        s2 ^= s0; s3 ^= s1; s1 ^= s2; s0 ^= s3
        s2 ^= t
        s3 = s3 << 45 | s3 >> 19
        return result
    }

    /// Writes 36 bytes of lowercase UUID text at `out`.
    public mutating func write(to out: UnsafeMutableRawPointer) {
        var hi = next(), lo = next()
        hi = (hi & ~0xF000) | 0x4000                       // version 4
        lo = (lo & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000 // RFC 4122 variant
        var k = 0
        for i in 0..<32 {
            if i == 8 || i == 12 || i == 16 || i == 20 {
                out.storeBytes(of: UInt8(ascii: "-"), toByteOffset: k, as: UInt8.self)
                k += 1
            }
            let nibble = i < 16 ? (hi >> UInt64(60 - i * 4)) & 0xF : (lo >> UInt64(60 - (i - 16) * 4)) & 0xF
            let digit: UInt8 = nibble < 10 ? 0x30 + UInt8(nibble) : 0x61 + UInt8(nibble - 10)
            out.storeBytes(of: digit, toByteOffset: k, as: UInt8.self)
            k += 1
        }
    }

    /// A new UUID as a String (tests and tools).
    public mutating func string() -> String {
        var bytes = [UInt8](repeating: 0, count: 36)
        bytes.withUnsafeMutableBytes { write(to: $0.baseAddress!) }
        return String(decoding: bytes, as: UTF8.self)
    }
}
