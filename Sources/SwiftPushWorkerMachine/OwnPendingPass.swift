/// A re-read of this consumer's own pending entries (at start, and after each lost Redis
/// connection): where it stands and what it found, for its one log line at the end.
struct OwnPendingPass {
    /// The last entry id listed and dealt with; nil before the first.
    var cursor: String?
    /// Whether what it takes back was a previous life's (at start): those are re-delivered
    /// entries, sent in paced groups (`SuspectPacer`). After a lost connection what is pending
    /// and not held was read by this life and never taken in: it is sent as read.
    let suspects: Bool
    /// Pending entries listed, those of them this worker held (skipped), and those taken back.
    var listed = 0, held = 0, taken = 0
    /// Round trips to Redis (listings and takes).
    var reads = 0

    init(suspects: Bool) { self.suspects = suspects }

    /// Its log line's fields.
    var fields: [String: String] {
        ["listed": String(listed), "held": String(held), "taken": String(taken), "reads": String(reads),
         "redelivered": suspects ? "yes" : "no"]
    }
}
