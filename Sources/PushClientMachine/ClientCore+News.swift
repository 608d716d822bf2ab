import PushCore

/// What the driver publishes, through accessors rather than the core's own fields: the outbox
/// is handed over whole, and the queue's gauges are read, never written from outside.
extension ClientCore {
    /// Outcomes, counters or connection news wait to be published.
    package var hasNews: Bool { !outbox.isEmpty }

    /// Notifications waiting for a stream or a retry delay (the stats' queue gauge).
    package var queuedCount: Int { queue.pending.count + queue.delayed.count }

    /// Notifications in flight on any connection (the stats' gauge).
    package var inFlightCount: Int { queue.inFlightTotal }

    /// Hands everything not yet published over to the driver: the outbox is swapped with
    /// `news`, which the driver emptied when it published the previous one, so that nothing is
    /// allocated or copied (the outcome counts' cells and the started tags keep their storage).
    package mutating func takeNews(into news: inout ResultOutbox) {
        swap(&outbox, &news)
    }
}
