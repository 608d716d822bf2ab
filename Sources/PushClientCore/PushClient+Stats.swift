import CSwiftPushABI
import PushClientMachine
import PushCore

/// Stats: a snapshot of counters, queues, connections and latency, readable from any thread.
extension PushClient {
    /// Fills a `push_stats` record. Counters are current; the queue and connection figures are
    /// at most one scan interval (50 ms) old.
    public func stats() -> push_stats {
        var s = push_stats()
        handoff.withLock { h in
            s.struct_size = UInt32(MemoryLayout<push_stats>.size)
            s.queued = UInt64(h.published.queued + h.submissions.count)
            s.in_flight = UInt64(h.published.inFlight)
            s.unpolled = UInt64(h.completions.count)
            s.sent = h.counters.sent
            s.accepted = h.counters.accepted
            s.rejected = h.counters.rejected
            s.failed = h.counters.failed
            s.retries = h.counters.resent
            s.goaways = h.counters.goaways
            s.connections_started = h.counters.connectionsOpened
            s.connections_open = UInt32(h.published.connectionsOpen)
            s.connections_opening = UInt32(h.published.connectionsOpening)
            s.latency_p50_us = h.latencies.percentile(0.5)
            s.latency_p99_us = h.latencies.percentile(0.99)
            copyCString(h.published.lastGoawayReason, into: &s.last_goaway_reason)
            copyCString(h.lastConnectionError?.description ?? "", into: &s.last_connection_error)
            let n = min(h.published.connections.count, 64)
            s.connection_count = UInt32(n)
            withUnsafeMutableBytes(of: &s.connections) { raw in
                let entries = raw.bindMemory(to: push_connection_stats.self)
                for i in 0..<n {
                    let c = h.published.connections[i]
                    entries[i] = push_connection_stats(state: c.0, stream_limit: c.1, in_flight: c.2, reserved: 0)
                }
            }
        }
        return s
    }

    /// The figures `push_client_metrics_text` shows (PushClientGroup adds its threads').
    public func metrics() -> ClientMetrics {
        var m = ClientMetrics()
        handoff.withLock { h in
            m.outcomes = h.outcomeCounts.byKey()
            m.counters = h.counters
            m.connectionsOpen = h.published.connectionsOpen
            m.connectionsOpening = h.published.connectionsOpening
            m.queued = h.published.queued + h.submissions.count
            m.inFlight = h.published.inFlight
            m.unpolled = h.completions.count
            m.latency = h.latencies
        }
        return m
    }

    /// The answer latencies so far (PushClientGroup merges its I/O threads' histograms).
    func latencySnapshot() -> LatencyHistogram { handoff.withLock { $0.latencies } }
}

/// Copies `text` into a fixed C char array as a NUL-terminated string, cut to fit.
func copyCString<T>(_ text: String, into field: inout T) {
    withUnsafeMutableBytes(of: &field) { dst in
        let bytes = Array(text.utf8.prefix(dst.count - 1))
        dst.copyBytes(from: bytes)
        dst[bytes.count] = 0
    }
}
