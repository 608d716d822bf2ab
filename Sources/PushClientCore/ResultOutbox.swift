import PushCore
import PushTransport

/// What `ClientCore` has for the callers since the last publish: outcomes with their counters,
/// and news of the connections (`PushClient.publish` moves it all into `Handoff` in one lock).
struct ResultOutbox {
    /// Notifications with their outcome, not yet published.
    var finished = SlotList()
    /// Counters since the last publish.
    var counters = ClientCounters()
    /// Outcome counts since the last publish.
    var outcomeCounts = OutcomeCounts()
    /// Answer latencies since the last publish.
    var latencies = LatencyHistogram()
    /// A connection failure to report (`last_connection_error`, waitUntilConnected's detail).
    var connectionError: TransportError?
    /// Pool connections that became ready, minus those that closed after being ready.
    var openConnectionsChange = 0
    /// What the stats show of connections changed (or a scan passed): `publishedState` anew.
    var stateChanged = false
    /// Tags of notifications whose request started for the first time
    /// (`ClientConfiguration.startedTagShift`), not yet published.
    var started: [UInt64] = []

    /// Nothing to publish.
    var isEmpty: Bool {
        finished.isEmpty && counters == ClientCounters() && latencies.total == 0 && connectionError == nil
            && openConnectionsChange == 0 && !stateChanged && started.isEmpty
    }

    /// The finished notifications, leaving none.
    mutating func takeFinished() -> SlotList {
        let list = finished
        finished = SlotList()
        return list
    }
}
