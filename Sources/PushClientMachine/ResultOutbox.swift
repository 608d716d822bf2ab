import PushCore

/// What `ClientCore` has for the callers since the last publish: outcomes with their counters,
/// and news of the connections (`PushClient.publish` moves it all into `Handoff` in one lock).
package struct ResultOutbox {
    /// Notifications with their outcome, not yet published.
    package var finished = SlotList()
    /// Counters since the last publish.
    package var counters = ClientCounters()
    /// Outcome counts since the last publish.
    package var outcomeCounts = OutcomeCounts()
    /// Answer latencies since the last publish.
    package var latencies = LatencyHistogram()
    /// A connection failure to report (`last_connection_error`, waitUntilConnected's detail).
    package var connectionError: TransportError?
    /// Pool connections that became ready, minus those that closed after being ready.
    package var openConnectionsChange = 0
    /// What the stats show of connections changed (or a scan passed): `publishedState` anew.
    package var stateChanged = false
    /// Tags of notifications whose request started for the first time
    /// (`ClientConfiguration.startedTagShift`), not yet published.
    package var started: [UInt64] = []

    /// Nothing yet.
    package init() {}

    /// Nothing to publish.
    package var isEmpty: Bool {
        finished.isEmpty && counters == ClientCounters() && latencies.total == 0 && connectionError == nil
            && openConnectionsChange == 0 && !stateChanged && started.isEmpty
    }

    /// The finished notifications, leaving none.
    package mutating func takeFinished() -> SlotList {
        let list = finished
        finished = SlotList()
        return list
    }
}
