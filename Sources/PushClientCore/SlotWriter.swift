import PushClientMachine
/// Lays a request out in a slot's buffer, field after field from `SlotLayout.request`, and says
/// where each field went. Both request kinds fill their slot with it (`fillDevice`,
/// `fillBroadcast`), so the copy-and-record steps exist once. The caller has reserved room for
/// everything it puts (`SlotTable.reserve`): nothing here checks the capacity.
struct SlotWriter {
    private let buffer: UnsafeMutableRawPointer
    /// Where the next field goes.
    private(set) var offset = SlotLayout.request

    init(buffer: UnsafeMutableRawPointer) { self.buffer = buffer }

    /// The bytes written so far: the request path, while only the path has been put.
    var written: Int32 { Int32(offset - SlotLayout.request) }

    /// An empty field at the current offset (an absent optional header).
    var empty: Slot.BufferRange { Slot.BufferRange(offset: Int32(offset), length: 0) }

    /// Appends `bytes` (possibly none) and returns where they are.
    @inline(__always) @discardableResult
    mutating func put(_ bytes: UnsafeRawBufferPointer) -> Slot.BufferRange {
        let range = Slot.BufferRange(offset: Int32(offset), length: Int32(bytes.count))
        if let base = bytes.baseAddress, bytes.count > 0 {
            (buffer + offset).copyMemory(from: base, byteCount: bytes.count)
            offset += bytes.count
        }
        return range
    }

    /// Appends a constant (a path prefix).
    @inline(__always)
    mutating func put(_ text: StaticString) {
        (buffer + offset).copyMemory(from: text.utf8Start, byteCount: text.utf8CodeUnitCount)
        offset += text.utf8CodeUnitCount
    }

    /// Appends `value`'s decimal digits (negative values write 0: callers check first) and
    /// returns where they are: at most 19 bytes.
    mutating func putDecimal(_ value: Int64) -> Slot.BufferRange {
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                     UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var v = UInt64(max(0, value))
        var n = 0
        let out = buffer + offset
        withUnsafeMutableBytes(of: &digits) { d in
            repeat {
                d[n] = UInt8(v % 10) + 0x30
                v /= 10
                n += 1
            } while v > 0
            for i in 0..<n { out.storeBytes(of: d[n - 1 - i], toByteOffset: i, as: UInt8.self) }
        }
        let range = Slot.BufferRange(offset: Int32(offset), length: Int32(n))
        offset += n
        return range
    }
}
