/// The fast lane (docs/worker.md, "The fast lane"): a second stream per shard,
/// `push:{s}:fast`, in the same consumer group and under the same hash tag, that every read
/// names first and whose notifications have a share of max_in_flight that the bulk lane cannot
/// take (`fast_reserve`). Its entries go through exactly the protocol of the bulk lane's; the
/// worker names one `f<id>` (`prefix`) everywhere past the stream itself: in its own books, in
/// the guards, progress and written hashes, in delayed-set members and in outcome records, so
/// that an id of one stream is never taken for the same id of the other. Only the commands that
/// touch a stream (XACK, XDEL, XPENDING, XCLAIM, XRANGE, XADD) take the bare id, in that stream:
/// the scripts tell the lane by the `f` (a bulk id starts with a digit).
public enum FastLane {
    /// What a fast-lane entry's id starts with in the worker's books and records.
    public static let prefix = "f"

    /// Whether `entryID` (as the worker names it) is a fast-lane entry's. Inlinable: the driver
    /// asks it of every notification it submits, from another module.
    @inlinable
    public static func isFast(_ entryID: String) -> Bool { entryID.utf8.first == 0x66 }
}
