/// The faults that count one connection's answers (`MockFaults.goawayAfterRequests`,
/// `killConnectionAfterRequests`): how many it has answered since the faults were set, and
/// what is due after each answer. New faults (a new generation) restart the count. No I/O:
/// `MockConnection` sends the GOAWAY or closes.
struct ConnectionFaults: Equatable {
    /// What is due after an answer.
    struct AfterAnswer: Equatable {
        /// Send GOAWAY(NO_ERROR) with this reason.
        var goawayReason: String?
        /// Write what is queued, then close the socket.
        var kill = false
    }

    /// The fault generation the count belongs to.
    private var generation: UInt64
    /// Answers submitted since the faults were set.
    private(set) var answered = 0

    /// Counts from 0 under the faults of `generation`.
    init(generation: UInt64) { self.generation = generation }

    /// The faults in force are of `generation`: a new one restarts the count.
    @inline(__always)
    mutating func follow(generation g: UInt64) {
        if g != generation {
            generation = g
            answered = 0
        }
    }

    /// An answer was submitted.
    @inline(__always)
    mutating func countAnswer() { answered += 1 }

    /// What `faults` make due after the answer just counted. `goawaySent`: the connection has
    /// sent its GOAWAY already (there is one per connection).
    func due(_ faults: MockFaults, goawaySent: Bool) -> AfterAnswer {
        var due = AfterAnswer()
        if let n = faults.goawayAfterRequests, n > 0, answered >= n, !goawaySent { due.goawayReason = faults.goawayReason }
        if let n = faults.killConnectionAfterRequests, n > 0, answered >= n { due.kill = true }
        return due
    }
}
