import PushCore

/// The core's one source of randomness: the jitter of retry delays (`RetryPolicy`) and of the
/// reconnect back-off (`ReconnectBackoff`), and the apns-ids of notifications that bring none.
/// The core never seeds it itself: the driver hands it one seeded from the system
/// (`init(seededFrom:)`), a test one seeded with a number (`init(seed:)`), so that a test's
/// run is the same every time. A xoshiro256** generator (`UUIDGenerator`): a draw costs a few
/// instructions, not a system call.
package struct CoreRandom {
    private var generator: UUIDGenerator
    /// Every `unit()` is this draw (tests that pin the jitter: the delay is then d/2 + unit·d/2).
    private let fixedUnit: Double?

    /// A source whose state comes from `seed`: the same seed, the same draws and apns-ids.
    package init(seed: UInt64) {
        generator = UUIDGenerator(seed: seed)
        fixedUnit = nil
    }

    /// A source seeded from `system` (the driver's, with the kernel's randomness).
    package init(seededFrom system: inout some RandomNumberGenerator) {
        generator = UUIDGenerator(seed: system.next())
        fixedUnit = nil
    }

    /// A source whose every jitter draw is `unit` (apns-ids still from `seed`).
    package init(fixedUnit unit: Double, seed: UInt64 = 1) {
        generator = UUIDGenerator(seed: seed)
        fixedUnit = unit
    }

    /// A draw in [0, 1).
    @inline(__always)
    package mutating func unit() -> Double {
        if let fixedUnit { return fixedUnit }
        return generator.nextUnit()
    }

    /// Writes a random (version 4) UUID's 36 bytes of text at `out` (an apns-id).
    package mutating func writeUUID(to out: UnsafeMutableRawPointer) {
        generator.write(to: out)
    }
}
