/// Which shards the status reads.
public enum ShardSelection: Sendable {
    /// Exactly these (`--shards`): a shard that does not exist is an empty view.
    case listed([String])
    /// These, and every shard whose stream exists (`SCAN MATCH push:{*}`), looked for again
    /// after `rescanMillis`: a SCAN walks every key of the database (the duplicate guards
    /// included), too much to do on every read.
    case discovered(including: [String], rescanMillis: Int)

    /// Shard names in order: numerically when both are numbers ("2" before "10").
    static func ordered(_ shards: some Sequence<String>) -> [String] {
        Set(shards).sorted { a, b in
            if let x = Int(a), let y = Int(b) { return x < y }
            return a < b
        }
    }
}
