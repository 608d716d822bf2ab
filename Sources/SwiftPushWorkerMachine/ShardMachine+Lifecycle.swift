/// The machine's life as one state, the way swift-nio-http2's connection state machine keeps
/// its own: each state carries what only it has (a stop's drain deadline, whether it closed
/// the clients, how far its hand-back got), so that a combination no life has (clients closed
/// while running, a hand-back asked for before a stop) cannot be written down.
enum Lifecycle: Equatable {
    /// Reading, sending and settling.
    case running
    /// SIGTERM or SIGINT came (`beginStop`): no new reads; what is held finishes, or is left
    /// pending and handed back, by `Stop.drainDeadlineNanos`.
    case stopping(Stop)
    /// The end: by a stop, or by a failure retrying cannot fix (`fail`). Nothing more is
    /// read or sent; `stopped`: it ended a stop (results that still come are then left
    /// pending, as during the stop).
    case finished(stopped: Bool)

    /// A stop under way.
    struct Stop: Equatable {
        /// When `drain_ms` is over: what is in flight then comes back cancelled.
        let drainDeadlineNanos: UInt64
        /// Whether the clients were told to close (once, at the drain deadline).
        var clientsClosed = false
        /// How far the hand-back of what the stop could not finish got.
        var handBack = HandBack.notYet
    }

    /// The stop's hand-back: not asked yet, asked, answered.
    enum HandBack { case notYet, asked, done }
}

extension ShardMachine {
    /// Whether a stop is under way, or ended the machine.
    var stopping: Bool {
        switch lifecycle {
        case .running, .finished(stopped: false): false
        case .stopping, .finished(stopped: true): true
        }
    }
    /// Whether the machine has ended.
    var finished: Bool { if case .finished = lifecycle { true } else { false } }

    /// The end, from whatever state the machine is in.
    mutating func end() { lifecycle = .finished(stopped: stopping) }
    /// The stop's drain deadline; 0 while running (every use asks `stopping` first).
    var drainDeadlineNanos: UInt64 { if case .stopping(let stop) = lifecycle { stop.drainDeadlineNanos } else { 0 } }
    /// Whether the stop has closed the clients.
    var clientsClosed: Bool { if case .stopping(let stop) = lifecycle { stop.clientsClosed } else { false } }
    /// The stop's hand-back step (`.notYet` outside a stop).
    var handBack: Lifecycle.HandBack { if case .stopping(let stop) = lifecycle { stop.handBack } else { .notYet } }

    /// Changes the stop under way (nothing outside one).
    mutating func updateStop(_ change: (inout Lifecycle.Stop) -> Void) {
        guard case .stopping(var stop) = lifecycle else { return }
        change(&stop)
        lifecycle = .stopping(stop)
    }
}
