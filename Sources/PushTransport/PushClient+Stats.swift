import CSwiftPushABI
import PushCore

/// Stats: a snapshot of counters, queues, connections and latency, readable from any thread.
extension PushClient {
    /// Fills a `push_stats` record. Counters are current; the queue and connection figures are
    /// at most one scan interval (50 ms) old.
    public func stats() -> push_stats {
        var s = push_stats()
        lock.withLock {
            s.struct_size = UInt32(MemoryLayout<push_stats>.size)
            s.queued = UInt64(published.queued + submissions.count)
            s.in_flight = UInt64(published.inFlight)
            s.unpolled = UInt64(completions.count)
            s.sent = counters.sent
            s.accepted = counters.accepted
            s.rejected = counters.rejected
            s.failed = counters.failed
            s.retries = counters.resent
            s.goaways = counters.goaways
            s.connections_started = counters.connectionsOpened
            s.connections_open = UInt32(published.connectionsOpen)
            s.connections_opening = UInt32(published.connectionsOpening)
            s.latency_p50_us = latencies.percentile(0.5)
            s.latency_p99_us = latencies.percentile(0.99)
            copyCString(published.lastGoawayReason, into: &s.last_goaway_reason)
            copyCString(lastConnectionError?.description ?? "", into: &s.last_connection_error)
            let n = min(published.connections.count, 64)
            s.connection_count = UInt32(n)
            withUnsafeMutableBytes(of: &s.connections) { raw in
                let entries = raw.bindMemory(to: push_connection_stats.self)
                for i in 0..<n {
                    let c = published.connections[i]
                    entries[i] = push_connection_stats(state: c.0, stream_limit: c.1, in_flight: c.2, reserved: 0)
                }
            }
        }
        return s
    }

    /// The figures `push_client_metrics_text` shows (PushClientGroup adds its threads').
    public func metrics() -> ClientMetrics {
        var m = ClientMetrics()
        lock.withLock {
            m.outcomes = outcomeCounts.byKey()
            m.counters = counters
            m.connectionsOpen = published.connectionsOpen
            m.connectionsOpening = published.connectionsOpening
            m.queued = published.queued + submissions.count
            m.inFlight = published.inFlight
            m.unpolled = completions.count
            m.latency = latencies
        }
        return m
    }

    /// The answer latencies so far (PushClientGroup merges its I/O threads' histograms).
    func latencySnapshot() -> LatencyHistogram { lock.withLock { latencies } }
}

/// Copies `text` into a fixed C char array as a NUL-terminated string, cut to fit.
func copyCString<T>(_ text: String, into field: inout T) {
    withUnsafeMutableBytes(of: &field) { dst in
        let bytes = Array(text.utf8.prefix(dst.count - 1))
        dst.copyBytes(from: bytes)
        dst[bytes.count] = 0
    }
}
