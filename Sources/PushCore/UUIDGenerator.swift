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

    /// Writes 36 bytes of lowercase UUID text at `out`, with `UUID128`'s writer (one text form
    /// of a UUID in the package).
    public mutating func write(to out: UnsafeMutableRawPointer) {
        let hi = next(), lo = next()
        // Version 4 in the high word, RFC 4122's variant in the low one.
        UUID128(high: (hi & ~0xF000) | 0x4000, low: (lo & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000).write(to: out)
    }

    /// A new UUID as a String (tests and tools).
    public mutating func string() -> String {
        var bytes = [UInt8](repeating: 0, count: 36)
        bytes.withUnsafeMutableBytes { write(to: $0.baseAddress!) }
        return String(decoding: bytes, as: UTF8.self)
    }
}
