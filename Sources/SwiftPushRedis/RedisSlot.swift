/// Redis Cluster's key → hash slot rule (https://redis.io/docs/reference/cluster-spec/, "Key
/// distribution model"): CRC16 (XMODEM: polynomial 0x1021, initial value 0) of the key — or of
/// its hash tag, the bytes between the first `{` and the next `}` when there are any — modulo
/// 16384. Every key of one shard of this project carries the tag `{s}`, so `push:{s}`,
/// `outcomes:{s}`... share a slot and one Lua script may touch them all.
public enum RedisSlot {
    /// The number of hash slots.
    public static let count = 16384

    /// The slot of `key`.
    public static func of(_ key: String) -> Int {
        var copy = key
        return copy.withUTF8 { of(UnsafeRawBufferPointer($0)) }
    }

    /// The slot of `key` given as bytes.
    public static func of(_ key: UnsafeRawBufferPointer) -> Int {
        Int(crc16(hashTag(of: key)) & 0x3FFF)
    }

    /// The part of `key` that is hashed: the hash tag when the key has a non-empty one,
    /// otherwise the whole key (`{}` or an unclosed `{` hashes the whole key).
    public static func hashTag(of key: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        guard let open = key.firstIndex(of: UInt8(ascii: "{")),
              let close = key[(open + 1)...].firstIndex(of: UInt8(ascii: "}")),
              close > open + 1 else { return key }
        return UnsafeRawBufferPointer(rebasing: key[(open + 1)..<close])
    }

    /// CRC16/XMODEM of `bytes` (the checksum Redis Cluster uses; `binascii.crc_hqx(b, 0)` in
    /// Python computes the same, which is how producers in both languages pick the same shard).
    public static func crc16(_ bytes: UnsafeRawBufferPointer) -> UInt16 {
        var crc: UInt16 = 0
        for b in bytes { crc = (crc << 8) ^ table[Int(UInt8(crc >> 8) ^ b)] }
        return crc
    }

    /// CRC16/XMODEM of a string's UTF-8 bytes.
    public static func crc16(_ text: String) -> UInt16 {
        var copy = text
        return copy.withUTF8 { crc16(UnsafeRawBufferPointer($0)) }
    }

    /// The byte-at-a-time table of polynomial 0x1021.
    private static let table: [UInt16] = (0..<256).map { i in
        var c = UInt16(i) << 8
        for _ in 0..<8 { c = (c & 0x8000) != 0 ? (c << 1) ^ 0x1021 : c << 1 }
        return c
    }
}
