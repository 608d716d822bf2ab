import PushCore

/// Outcomes `ClientCore` ended since the last publish, with the counters that go with them
/// (`PushClient.publish` moves them into `Handoff` in one lock).
struct ResultOutbox {
    /// Notifications with their outcome, not yet published.
    var finished = SlotList()
    /// Counters since the last publish.
    var counters = ClientCounters()
    /// Outcome counts since the last publish.
    var outcomeCounts = OutcomeCounts()
    /// Answer latencies since the last publish.
    var latencies = LatencyHistogram()

    /// Nothing to publish.
    var isEmpty: Bool { finished.isEmpty && counters == ClientCounters() && latencies.total == 0 }
}
