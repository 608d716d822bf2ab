#if canImport(Glibc)
import Glibc
#endif
import PushCore

/// The mock's counters and its record of processed requests.
///
/// Written by the server's I/O thread, read by any thread; every access holds `lock`, and a
/// processed request costs one lock round trip (tens of nanoseconds uncontended) however much
/// it updates. The record is kept compact: fixed-size entries plus two byte arenas (apns-ids,
/// device tokens), so recording a request appends bytes and allocates nothing in steady state.
/// Strings are made only when a snapshot is taken.
final class MockLedger: @unchecked Sendable {
    private let lock = PThreadMutex()
    private var stats = MockStats()
    /// Rejections by reason raw value (the last slot counts reasons outside the table), so the
    /// I/O thread never builds a String per error.
    private var rejectedByCode = [Int](repeating: 0, count: 64)

    /// Whether requests are recorded, and how many records are kept at most (later requests
    /// are counted in `recordsDropped` instead).
    let recording: Bool
    let recordLimit: Int

    private struct Entry {
        var connection: Int32
        var stream: Int32
        /// The reason's raw value; -1 for a stalled request.
        var reason: Int32
        var tokenStart: Int32
        var tokenLength: Int32
        var topicLength: Int32
        var collapseIdLength: Int32   // -1: absent
        var channelIdLength: Int32    // -1: absent (device notifications)
        var pushType: Int32           // -1: absent
        var priority: Int32           // 0: absent
        var expiration: Int64         // -1: absent
        var authorized: Bool          // an authorization header was sent
        var receivedMicros: Int64     // UNIX µs when processed
    }
    private var entries: [Entry] = []
    /// 36 bytes per entry.
    private var apnsIds: [UInt8] = []
    private var tokens: [UInt8] = []

    init(recording: Bool, recordLimit: Int) {
        self.recording = recording
        self.recordLimit = max(0, recordLimit)
    }

    // MARK: - Written by the I/O thread

    func connectionOpened() {
        lock.withLock {
            stats.connections += 1
            stats.openConnections += 1
        }
    }

    func connectionClosed() { lock.withLock { stats.openConnections -= 1 } }
    /// A `MockConnection` object was made, or freed (`liveConnectionObjects`).
    func connectionObjectCreated() { lock.withLock { stats.liveConnectionObjects += 1 } }
    func connectionObjectFreed() { lock.withLock { stats.liveConnectionObjects -= 1 } }
    func connectionRefused() { lock.withLock { stats.refusedConnections += 1 } }
    func pingReceived() { lock.withLock { stats.pingsReceived += 1 } }
    func certificateRefused() { lock.withLock { stats.refusedCertificates += 1 } }
    func connectionKilled() { lock.withLock { stats.killedConnections += 1 } }
    func streamUnanswered() { lock.withLock { stats.unansweredStreams += 1 } }
    func streamRefused() { lock.withLock { stats.refusedStreams += 1 } }
    func goawaySent() { lock.withLock { stats.goaways += 1 } }
    func streamLimitViolated() { lock.withLock { stats.streamLimitViolations += 1 } }

    func observeConcurrentStreams(_ n: Int) {
        lock.withLock { if n > stats.peakConcurrentStreams { stats.peakConcurrentStreams = n } }
    }

    /// Counts (and records) one processed request. `reason` is `.none` for a 200 and ignored
    /// when `stalled`; `apnsId` points at 36 bytes.
    func processed(connection: Int, stream s: MockStream, reason: APNsReason, stalled: Bool) {
        let token = s.tokenBytes
        lock.lock()
        defer { lock.unlock() }
        if stalled {
            stats.stalledRequests += 1
        } else {
            stats.requests += 1
            if reason == .none {
                stats.accepted += 1
            } else {
                rejectedByCode[Int(reason.rawValue) < rejectedByCode.count - 1 ? Int(reason.rawValue) : rejectedByCode.count - 1] += 1
            }
        }
        guard recording else { return }
        guard entries.count < recordLimit else {
            stats.recordsDropped += 1
            return
        }
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let collapse = s.collapseIdBytes
        // A broadcast names its app in the path: that is its topic in the record.
        let broadcast = s.path == .broadcast
        let topic = broadcast ? s.bundleBytes : s.topicBytes
        let channel = broadcast ? s.channelIdBytes : nil
        entries.append(Entry(connection: Int32(truncatingIfNeeded: connection), stream: s.streamID,
                             reason: stalled ? -1 : reason.rawValue,
                             tokenStart: Int32(tokens.count), tokenLength: Int32(token.count),
                             topicLength: Int32(topic.count), collapseIdLength: Int32(collapse?.count ?? -1),
                             channelIdLength: Int32(channel?.count ?? -1),
                             pushType: s.pushType?.rawValue ?? -1, priority: s.priority, expiration: s.expiration,
                             authorized: s.authorization != .absent,
                             receivedMicros: Int64(now.tv_sec) * 1_000_000 + Int64(now.tv_nsec) / 1000))
        apnsIds.append(contentsOf: UnsafeRawBufferPointer(start: s.apnsId, count: 36))
        // Variable-length fields one after another in one byte array: token, topic, collapse
        // id, channel id.
        tokens.append(contentsOf: token)
        tokens.append(contentsOf: topic)
        if let collapse { tokens.append(contentsOf: collapse) }
        if let channel { tokens.append(contentsOf: channel) }
    }

    // MARK: - Read by any thread

    func snapshot() -> MockStats {
        lock.withLock {
            var s = stats
            for (code, n) in rejectedByCode.enumerated() where n > 0 {
                let text = code == rejectedByCode.count - 1 ? "Unknown" : (APNsReason(rawValue: Int32(code)) ?? .unknown).text
                s.rejectedByReason[text, default: 0] += n
            }
            s.records = entries.count
            return s
        }
    }

    /// The records so far, in processing order.
    func records() -> [MockRecord] {
        lock.withLock {
            var out: [MockRecord] = []
            out.reserveCapacity(entries.count)
            for (i, e) in entries.enumerated() {
                let id = String(decoding: apnsIds[(i * 36)..<(i * 36 + 36)], as: UTF8.self)
                var at = Int(e.tokenStart)
                let token = String(decoding: tokens[at..<(at + Int(e.tokenLength))], as: UTF8.self)
                at += Int(e.tokenLength)
                let topic = String(decoding: tokens[at..<(at + Int(e.topicLength))], as: UTF8.self)
                at += Int(e.topicLength)
                let collapse = e.collapseIdLength < 0 ? nil : String(decoding: tokens[at..<(at + Int(e.collapseIdLength))], as: UTF8.self)
                at += max(0, Int(e.collapseIdLength))
                let channel = e.channelIdLength < 0 ? nil : String(decoding: tokens[at..<(at + Int(e.channelIdLength))], as: UTF8.self)
                let status: Int
                let reason: String
                if e.reason < 0 {
                    status = 0
                    reason = "stalled"
                } else {
                    let r = APNsReason(rawValue: e.reason) ?? .unknown
                    status = Int(r.httpStatus)
                    reason = r.text
                }
                var record = MockRecord(connection: Int(e.connection), stream: e.stream, apnsId: id,
                                        deviceToken: token, status: status, reason: reason)
                record.topic = topic
                record.pushType = e.pushType < 0 ? nil : PushType(rawValue: e.pushType)
                record.priority = e.priority > 0 ? Int(e.priority) : nil
                record.expiration = e.expiration < 0 ? nil : e.expiration
                record.collapseId = collapse
                record.channelId = channel
                record.hadAuthorization = e.authorized
                record.receivedMicros = e.receivedMicros
                out.append(record)
            }
            return out
        }
    }

    /// Forgets every record (the counters stay).
    func resetRecord() {
        lock.withLock {
            entries.removeAll(keepingCapacity: true)
            apnsIds.removeAll(keepingCapacity: true)
            tokens.removeAll(keepingCapacity: true)
            stats.recordsDropped = 0
        }
    }
}
