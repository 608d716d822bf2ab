/// A command's arguments packed into one byte buffer, for the queue's big script calls: a batch
/// of 500 outcomes is some 15,000 arguments, and an array per argument showed in the profile.
public struct RedisArguments: Sendable {
    /// Every argument's bytes, one after the other.
    var bytes: [UInt8] = []
    /// Where each argument ends in `bytes`.
    var ends: [Int] = []

    /// Empty arguments, with room for `bytes` bytes.
    public init(reservingBytes: Int = 0) { bytes.reserveCapacity(reservingBytes) }

    /// Arguments given as strings (commands that are not on a hot path).
    public init(_ arguments: [String]) {
        for a in arguments { append(a) }
    }

    /// Arguments given as byte arrays.
    public init(_ arguments: [[UInt8]]) {
        for a in arguments { append(a) }
    }

    /// How many arguments there are.
    public var count: Int { ends.count }

    /// Appends one argument: the string's UTF-8 bytes.
    public mutating func append(_ text: String) {
        bytes.append(contentsOf: text.utf8)
        ends.append(bytes.count)
    }

    /// Appends one argument: these bytes.
    public mutating func append(_ raw: [UInt8]) {
        bytes.append(contentsOf: raw)
        ends.append(bytes.count)
    }

    /// Appends one argument: `value` in decimal (without building a String on the way).
    public mutating func append(integer value: Int64) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        // Digits written backwards into a 20-byte buffer on the stack, then appended at once.
        var magnitude = value.magnitude
        var text: (UInt64, UInt64, UInt64) = (0, 0, 0)
        withUnsafeMutableBytes(of: &text) { buffer in
            var i = 20
            repeat {
                i -= 1
                buffer[i] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[i..<20]))
        }
        ends.append(bytes.count)
    }

    /// Appends every argument of `other`.
    public mutating func append(contentsOf other: RedisArguments) {
        let base = bytes.count
        bytes.append(contentsOf: other.bytes)
        ends.append(contentsOf: other.ends.map { $0 + base })
    }

    /// Removes every argument, keeping the memory.
    public mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
        ends.removeAll(keepingCapacity: true)
    }

    /// The arguments as text (tests and messages).
    public var strings: [String] {
        var start = 0
        return ends.map { end in
            defer { start = end }
            return String(decoding: bytes[start..<end], as: UTF8.self)
        }
    }
}
