/// How producers spread notifications over shards: shard `crc16(id) mod count` of the
/// notification id's UTF-8 bytes (CRC16/XMODEM, `RedisSlot.crc16`), named `"0"`...`"count-1"`.
/// Stable (the same id always goes to the same shard, so a producer that resends an id sends
/// it where the first copy went and the worker's id guard sees both), and the same in Swift
/// (`swiftpush enqueue --shards N`) and Python (`Producer(shards=N)`, `binascii.crc_hqx`).
public enum ShardSpread {
    /// The shard name of notification `id` among `count` shards (count ≥ 1).
    public static func shard(of id: String, count: Int) -> String {
        precondition(count >= 1, "ShardSpread: count must be at least 1")
        return String(Int(RedisSlot.crc16(id)) % count)
    }
}
