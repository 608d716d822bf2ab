/// Reads typed values from the front of a fuzz input, the way LLVM's `FuzzedDataProvider`
/// does, so that one byte string from libFuzzer can drive a sequence of API calls.
///
/// Every read succeeds: past the end it yields zeros and empty byte strings, so a harness never
/// has to check for exhaustion except to stop its loop (`isEmpty`).
public struct FuzzInput {
    private let bytes: UnsafeRawBufferPointer
    private var position = 0

    public init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    /// Whether every byte has been read.
    public var isEmpty: Bool { position >= bytes.count }

    /// The bytes not read yet.
    public var remainingCount: Int { max(0, bytes.count - position) }

    /// One byte (0 when exhausted).
    public mutating func byte() -> UInt8 {
        guard position < bytes.count else { return 0 }
        defer { position += 1 }
        return bytes[position]
    }

    /// A byte reduced to `0..<count` (`count` > 0).
    public mutating func choose(_ count: Int) -> Int { Int(byte()) % count }

    /// One of `values`, picked by a byte.
    public mutating func pick<T>(_ values: [T]) -> T { values[choose(values.count)] }

    public mutating func bool() -> Bool { byte() & 1 == 1 }

    /// `n` bytes little-endian as an unsigned integer (n <= 8).
    private mutating func littleEndian(_ n: Int) -> UInt64 {
        var v: UInt64 = 0
        for k in 0..<n { v |= UInt64(byte()) << (8 * UInt64(k)) }
        return v
    }

    public mutating func uint32() -> UInt32 { UInt32(truncatingIfNeeded: littleEndian(4)) }

    public mutating func int32() -> Int32 { Int32(bitPattern: uint32()) }

    /// An Int64: half the time one of the values at the edges of the ranges the library checks,
    /// otherwise eight raw bytes.
    public mutating func int64() -> Int64 {
        if bool() { return pick(Self.edgeIntegers) }
        return Int64(bitPattern: littleEndian(8))
    }

    /// A small Int32 biased towards `0...limit` (enum values, option numbers), sometimes any.
    public mutating func smallInt32(upTo limit: Int32) -> Int32 {
        let b = byte()
        if b < 0xF0 { return Int32(b) % (limit + 1) }
        return b < 0xF8 ? -Int32(b & 7) : int32()
    }

    /// A Double: edge values (NaN, infinities, -0, the ends of 0...1, subnormals) or raw bits.
    public mutating func double() -> Double {
        if bool() { return pick(Self.edgeDoubles) }
        return Double(bitPattern: littleEndian(8))
    }

    /// A byte string: a one-byte length (`0xFF` means a two-byte length follows), then that
    /// many bytes, cut short at the end of the input.
    public mutating func bytes(max limit: Int = 4096) -> [UInt8] {
        var n = Int(byte())
        if n == 0xFF { n = Int(littleEndian(2)) }
        n = min(n, limit, remainingCount)
        defer { position += n }
        return Array(bytes[position..<position + n])
    }

    /// Every byte not read yet.
    public mutating func rest() -> [UInt8] {
        guard position < bytes.count else { return [] }
        defer { position = bytes.count }
        return Array(bytes[position...])
    }

    public static let edgeIntegers: [Int64] = [
        0, 1, -1, 2, 5, 10, 64, 65, 255, 256, 4096, 4097, 5120, 5121, 65535, 65536,
        Int64(Int32.max), Int64(Int32.max) + 1, Int64(Int32.min), Int64(Int32.min) - 1,
        Int64(UInt32.max), 1_700_000_000, 1_700_000_000_123, 86_400_000, 86_400_001,
        Int64.max, Int64.min, Int64.max - 1, Int64.min + 1,
    ]

    public static let edgeDoubles: [Double] = [
        0, -0.0, 1, 0.5, 0.25, 1e-5, 0.1, 1.0.nextUp, 0.0.nextUp, -(0.0.nextUp), 1.0.nextDown,
        Double.leastNormalMagnitude, Double.greatestFiniteMagnitude, .infinity, -.infinity, .nan,
        -.nan, .signalingNaN, -1, 2, 1e300, 123456789.125,
    ]
}
