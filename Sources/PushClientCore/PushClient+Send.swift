#if canImport(Glibc)
import Glibc
#endif
import CSwiftPushABI
import PushClientMachine
import PushCore

/// The caller-side half of the client: send, poll, wait, close. Any thread may call these.
extension PushClient {
    /// The result of a send: how many notifications (a prefix of the batch) were accepted, and
    /// why the rest were not (nil when all were).
    public struct SendResult: Sendable {
        public var accepted: Int
        public var error: ClientError?
    }

    /// Validates and queues `count` notifications. Stops at the first invalid one (everything
    /// before it is queued). When no slot is free, waits up to `timeoutMillis` (0: not at all,
    /// negative: without limit) and then reports `.queueFull` with the prefix that fit.
    public func send(_ notifications: UnsafePointer<push_notification>, count: Int, timeoutMillis: Int32) -> SendResult {
        send(notifications, count: count, timeoutMillis: timeoutMillis, stride: MemoryLayout<push_notification>.stride)
    }

    /// As `send(_:count:timeoutMillis:)` for an array whose records are `stride` bytes apart
    /// (`NotificationRecord.stride`: a caller's older, smaller records).
    public func send(_ notifications: UnsafePointer<push_notification>, count: Int, timeoutMillis: Int32, stride: Int) -> SendResult {
        send(CNotificationRecords(notifications, count: count, stride: stride), from: 0, timeoutMillis: timeoutMillis)
    }

    /// The send path of every caller (the C records, the Swift API's values): validates and
    /// queues the notifications of `batch` from index `start` on. Stops at the first invalid
    /// one (everything before it is queued; `accepted` counts from `start`). When no slot is
    /// free, waits up to `timeoutMillis` (0: not at all, negative: without limit) and then
    /// reports `.queueFull` with the prefix that fit.
    package func send<Batch: NotificationBatch>(_ batch: Batch, from start: Int, timeoutMillis: Int32) -> SendResult {
        // From a result callback (the I/O thread) waiting for room would wait for ourselves.
        let timeoutMillis = isIOThread ? 0 : timeoutMillis
        let count = batch.count - start
        var done = 0
        let waitUntil: UInt64? = CallerDeadline.after(millis: timeoutMillis)
        while done < count {
            // 1. Take free slots (one lock for the batch).
            var taken = SlotList()
            // (nil: wait for room; .some(nil): slots taken; .some(error): refused.)
            let refused: ClientError? = handoff.withLock(waitingUntil: waitUntil) { h, _ -> ClientError?? in
                if !h.lifecycle.isOpen { return .some(ClientError(.closed, "the client is closed")) }
                while taken.count < count - done {
                    var index = h.freeSlots.popFirst(in: slots)
                    if index < 0 { index = slots.create() }
                    if index < 0 { break }
                    taken.append(index, in: slots)
                }
                if !taken.isEmpty { return .some(nil) }
                if timeoutMillis == 0 || CallerDeadline.passed(waitUntil) {
                    return .some(ClientError(.queueFull, "all \(slots.capacity) slots are in use (queued, in flight or waiting to be polled)"))
                }
                return nil
            }
            if let refused { return SendResult(accepted: done, error: refused) }

            // 2. Fill them outside the lock.
            var filled = SlotList()
            var failure: ClientError?
            let now = configuration.timing.clock.monotonicNanos() // the deadline counts from here
            while !taken.isEmpty {
                let index = taken.head
                let slot = slots[index]
                if let violation = batch.withNotification(at: start + done, { fill(slot: slot, from: $0, now: now) }) {
                    failure = ClientError(violation.status, violation.message)
                    break
                }
                _ = taken.popFirst(in: slots)
                filled.append(index, in: slots)
                done += 1
            }

            // 3. Hand them to the I/O thread; return unused slots.
            var lateForCallback = SlotList()
            var signalResults = false
            let wake = handoff.withLockNotifying { h, waiters in
                if h.lifecycle == .cancelling || h.lifecycle == .finished {
                    // close() raced with this send and the I/O thread has taken its last look at
                    // the queue: these were accepted, so they still get their (cancelled) results.
                    var index = filled.head
                    while index >= 0 {
                        let slot = slots[index]
                        PushClient.markCancelled(slot, now: configuration.timing.clock.monotonicNanos())
                        index = slot.pointee.links.next
                    }
                    if configuration.callbacks.result == nil {
                        h.completions.splice(&filled, in: slots)
                        if h.waiters > 0 { waiters.broadcast() }
                        signalResults = true
                    } else {
                        lateForCallback.splice(&filled, in: slots)
                    }
                }
                let wake = h.ioIdle && !filled.isEmpty
                if !filled.isEmpty { h.ioIdle = false }
                h.submissions.splice(&filled, in: slots)
                h.freeSlots.splice(&taken, in: slots)
                return wake
            }
            if wake { loop.wake() }
            if signalResults { resultSignal?.notify() }
            if let callback = configuration.callbacks.result, !lateForCallback.isEmpty {
                // Rare: delivered on this thread, since the I/O thread has finished.
                let buffer = UnsafeMutablePointer<push_result>.allocate(capacity: PushClient.callbackBatch)
                deliver(&lateForCallback, to: callback, buffer: buffer)
                buffer.deallocate()
            }
            if let failure { return SendResult(accepted: done, error: failure) }
        }
        return SendResult(accepted: done, error: nil)
    }

    /// Copies one notification into a slot after checking it; returns the broken rule if any.
    @inline(__always)
    private func fill(slot: UnsafeMutablePointer<Slot>, from n: borrowing NotificationView, now: UInt64) -> NotificationRules.Violation? {
        n.channelID.isPresent ? fillBroadcast(slot: slot, from: n, now: now) : fillDevice(slot: slot, from: n, now: now)
    }

    /// `fill` for a device notification (`POST /3/device/<token>`).
    private func fillDevice(slot: UnsafeMutablePointer<Slot>, from n: borrowing NotificationView, now: UInt64) -> NotificationRules.Violation? {
        guard let pushType = PushType(rawValue: n.pushType) else {
            return .init(.badPushType, "push type \(n.pushType) is not a PUSH_TYPE_* value")
        }
        guard n.deviceToken.isPresent else {
            // Reached with channel_id NULL too: say both, a broadcast's caller may have lost its channel id.
            return .init(.badDeviceToken, "device_token and channel_id are both NULL: a device notification needs a device_token, a broadcast a channel_id")
        }
        guard let token = n.deviceToken.resolved() else { return .init(.badDeviceToken, notALength("device_token_len")) }
        if !n.tokenChecked, let v = NotificationRules.checkDeviceToken(token) { return v }
        let topic: UnsafeRawBufferPointer
        if n.topic.isPresent {
            guard let b = n.topic.resolved() else { return .init(.badTopic, notALength("topic_len")) }
            topic = b
        } else {
            topic = constants.defaultTopic
        }
        if let v = NotificationRules.checkTopic(topic, pushType: pushType) { return v }
        let priority: Int32
        switch NotificationRules.resolvePriority(n.priority, pushType: pushType) {
        case .success(let p): priority = p
        case .failure(let v): return v
        }
        guard n.payload.isPresent else { return .init(.badPayload, "payload is NULL") }
        guard let payload = n.payload.resolved() else { return .init(.payloadTooLarge, notALength("payload_len")) }
        if !n.payloadChecked, let v = NotificationRules.checkPayload(payload, pushType: pushType) { return v }
        guard let collapse = n.collapseID.resolved() else { return .init(.badCollapseId, notALength("collapse_id_len")) }
        if n.collapseID.isPresent, let v = NotificationRules.checkCollapseId(collapse) { return v }
        guard let apnsId = n.apnsID.resolved() else { return .init(.badApnsId, notALength("apns_id_len")) }
        let checkID = n.apnsID.isPresent ? !n.apnsIDChecked : false
        if checkID, let v = NotificationRules.checkApnsId(apnsId) { return v }
        if n.hasExpiration, let v = NotificationRules.checkExpiration(n.expiration) { return v }

        let prefix = SlotLayout.pathPrefix
        let needed = SlotLayout.request + prefix.utf8CodeUnitCount + token.count + topic.count + payload.count + collapse.count + 24
        guard SlotTable.reserve(slot, bytes: needed), let buffer = slot.pointee.storage.buffer else {
            return .init(.noMemory, "out of memory copying the notification")
        }
        var w = SlotWriter(buffer: buffer)
        w.put(prefix)
        w.put(token)
        slot.pointee.request.pathLength = w.written
        slot.pointee.request.topic = w.put(topic)
        slot.pointee.request.payload = w.put(payload)
        slot.pointee.request.collapseID = w.put(collapse)
        slot.pointee.request.expiration = n.hasExpiration ? w.putDecimal(n.expiration) : w.empty
        slot.pointee.request.channelID = w.empty
        storeApnsId(apnsId, in: slot)
        slot.pointee.request.pushType = pushType.rawValue
        slot.pointee.request.priority = priority
        startFresh(slot, tag: n.tag, now: now, deadlineNanos: n.deadlineNanos)
        return nil
    }

    /// Copies the caller's apns-id (lowercased, as APNs wants it) into the slot, or notes that
    /// the library generates one (`apnsId` empty).
    func storeApnsId(_ apnsId: UnsafeRawBufferPointer, in slot: UnsafeMutablePointer<Slot>) {
        guard apnsId.count == 36, let buffer = slot.pointee.storage.buffer else {
            slot.pointee.request.hasCallerApnsId = false
            return
        }
        for i in 0..<36 {
            var c = apnsId[i]
            if c >= 0x41 && c <= 0x46 { c += 0x20 } // APNs wants lowercase
            buffer.storeBytes(of: c, toByteOffset: SlotLayout.apnsId + i, as: UInt8.self)
        }
        slot.pointee.request.hasCallerApnsId = true
    }

    /// A freshly filled slot: no attempts, no result yet; its deadline runs from `now`, for
    /// `deadlineNanos` (0: the client's deadline).
    @inline(__always)
    func startFresh(_ slot: UnsafeMutablePointer<Slot>, tag: UInt64, now: UInt64, deadlineNanos: UInt64) {
        slot.pointee.request.tag = tag
        slot.pointee.request.submitNanos = now
        slot.pointee.request.deadlineNanos = now &+ (deadlineNanos == 0 ? constants.deadlineNanos : deadlineNanos)
        // Whole groups, so that a field added to either starts clean too (constant stores).
        slot.pointee.transmission = Slot.Transmission()
        slot.pointee.answer = Slot.Answer()
    }

    /// The message for a C field whose length is no length (`BorrowedBytes.resolved` gave nil).
    func notALength(_ field: String) -> String {
        "push_notification.\(field) is not a length (2^63 or more: a negative value cast to size_t?)"
    }

    // MARK: - Results

    /// Moves up to `max` results into `out` (records of `recordSize` bytes, the caller's
    /// sizeof(push_result)), waiting up to `timeoutMillis` for the first one (0: don't wait,
    /// negative: no limit). Returns how many were written. After `close`, results of cancelled
    /// notifications are still returned; 0 with `allDelivered` true means nothing more will come.
    public func poll(into out: UnsafeMutableRawPointer, max: Int, recordSize: Int, timeoutMillis: Int32) -> (count: Int, allDelivered: Bool) {
        var records = CResultRecords(out, recordSize: recordSize)
        return poll(max: max, timeoutMillis: timeoutMillis, into: &records)
    }

    /// The poll of every caller (the C records, the Swift API's values): hands up to `max`
    /// results to `reader`, one at a time, waiting up to `timeoutMillis` for the first one (0:
    /// don't wait, negative: no limit), then frees their slots. The reader runs under the
    /// hand-off lock (it copies what it keeps; it must not call the client). Returns how many
    /// were read; 0 with `allDelivered` true means nothing more will come.
    package func poll<Reader: ResultReader>(max: Int, timeoutMillis: Int32, into reader: inout Reader) -> (count: Int, allDelivered: Bool) {
        let r = pollLocked(max: max, timeoutMillis: timeoutMillis, into: &reader)
        // A group settles its shared descriptor itself, once every thread was polled.
        if resultSignal == nil { settleReadiness() }
        return r
    }

    /// A descriptor that is readable while results are waiting (`ResultReadiness`), for event
    /// loops. Not available with a result callback (nothing is polled then).
    public func resultFileDescriptor() throws(ClientError) -> Int32 {
        if configuration.callbacks.result != nil {
            throw ClientError(.invalidArgument, "results go to the result callback: there is nothing to poll")
        }
        let fd = try readiness.descriptor()
        settleReadiness()
        return fd
    }

    /// Whether a poll would return something now (results, or the end).
    var hasWaitingResults: Bool { handoff.withLock { !$0.completions.isEmpty || $0.lifecycle == .finished } }

    /// After a poll: the descriptor stays readable only while results wait (reset, then check:
    /// a result published in between signals after the reset).
    func settleReadiness() {
        guard readiness.inUse else { return }
        readiness.reset()
        if hasWaitingResults { readiness.signal() }
    }

    private func pollLocked<Reader: ResultReader>(max: Int, timeoutMillis: Int32, into reader: inout Reader) -> (count: Int, allDelivered: Bool) {
        let waitUntil: UInt64? = CallerDeadline.after(millis: timeoutMillis)
        return handoff.withLock(waitingUntil: waitUntil) { h, waiters -> (count: Int, allDelivered: Bool)? in
            if h.completions.isEmpty {
                if h.lifecycle == .finished { return (0, true) }
                if timeoutMillis == 0 || CallerDeadline.passed(waitUntil) { return (0, false) }
                return nil
            }
            var n = 0
            var released = SlotList()
            while n < max {
                let index = h.completions.popFirst(in: slots)
                if index < 0 { break }
                reader.read(ResultView(slots[index]))
                released.append(index, in: slots)
                n += 1
            }
            h.freeSlots.splice(&released, in: slots)
            if h.waiters > 0 { waiters.broadcast() } // senders waiting for room
            return (n, false)
        }
    }

    /// Writes one result into the caller's record of `recordSize` bytes at `target` (its
    /// sizeof(push_result): a smaller, older record gets what fits).
    @inline(__always)
    static func write(_ result: ResultView, to target: UnsafeMutableRawPointer, recordSize: Int) {
        let copySize = Swift.min(recordSize, MemoryLayout<push_result>.size)
        if recordSize >= MemoryLayout<push_result>.size && Int(bitPattern: target) % MemoryLayout<push_result>.alignment == 0 {
            fillResult(target.assumingMemoryBound(to: push_result.self), from: result)
        } else {
            // A smaller (older) or unaligned record: build it aside, copy what fits.
            var record = push_result()
            fillResult(&record, from: result)
            withUnsafeBytes(of: &record) { target.copyMemory(from: $0.baseAddress!, byteCount: copySize) }
        }
        target.storeBytes(of: UInt32(copySize), as: UInt32.self)
    }

    /// Calls the result callback with the results in `list` (in batches), then frees their
    /// slots. Called without the lock; the slots belong to the calling thread until freed.
    func deliver(_ list: inout SlotList, to callback: ResultCallback, buffer: UnsafeMutablePointer<push_result>) {
        var index = list.head
        var n = 0
        while index >= 0 {
            PushClient.fillResult(buffer + n, from: ResultView(slots[index]))
            n += 1
            index = slots[index].pointee.links.next
            if n == PushClient.callbackBatch || index < 0 {
                let started = CallerDeadline.now()
                callback.function(callback.userData, buffer, n)
                let took = CallerDeadline.now() &- started
                if took > PushClient.slowCallbackNanos {
                    log(.warning, .slowCallback, "the result callback took \(took / 1_000_000) ms for \(n) results: the I/O thread waited for it")
                }
                n = 0
            }
        }
        handoff.withLockNotifying { h, waiters in
            h.freeSlots.splice(&list, in: slots)
            if h.waiters > 0 { waiters.broadcast() }
        }
    }

    /// Writes a result into `r` (whole: zeroed first), straight from its slot: no copy of the
    /// slot or of the record on the way (results are copied per notification, it shows).
    @inline(__always)
    private static func fillResult(_ r: UnsafeMutablePointer<push_result>, from result: ResultView) {
        r.initialize(to: push_result())
        r.pointee.struct_size = UInt32(MemoryLayout<push_result>.size)
        r.pointee.outcome = result.outcome
        r.pointee.status = result.status
        r.pointee.reason = result.reason
        r.pointee.tag = result.tag
        r.pointee.timestamp_ms = result.timestampMs
        r.pointee.latency_us = result.latencyMicros
        r.pointee.attempts = result.attempts
        let apnsID = result.apnsID, uniqueID = result.uniqueID, text = result.reasonText
        if let id = apnsID.baseAddress {
            // Always 36 bytes: a constant count lets the copy be two moves instead of a memcpy.
            withUnsafeMutableBytes(of: &r.pointee.apns_id) { $0.baseAddress!.copyMemory(from: id, byteCount: 36) }
        }
        if !uniqueID.isEmpty {
            withUnsafeMutableBytes(of: &r.pointee.unique_id) { $0.copyMemory(from: uniqueID) }
        }
        if !text.isEmpty {
            withUnsafeMutableBytes(of: &r.pointee.reason_text) { $0.copyMemory(from: text) }
        }
    }

    // MARK: - Connection readiness

    /// Waits until at least one connection is open. Fails at once when a connection attempt
    /// failed in a way that retrying cannot fix (TLS: certificate, host name, ALPN), and with
    /// `.timeout` (carrying the last connection error) when time runs out; its message names
    /// `reportingMillis` as the timeout when given (a caller that waits in turns: the Swift API).
    public func waitUntilConnected(timeoutMillis: Int32, reportingMillis: Int32? = nil) -> ClientError? {
        let waitUntil: UInt64? = CallerDeadline.after(millis: timeoutMillis)
        // (nil: wait; .some(nil): connected; .some(error): failed.)
        return handoff.withLock(waitingUntil: waitUntil) { h, _ -> ClientError?? in
            if h.openConnections > 0 { return .some(nil) }
            if !h.lifecycle.isOpen { return .some(ClientError(.closed, "the client is closed")) }
            if let e = h.lastConnectionError, e.kind == .tls { return .some(ClientError(.tls, e.description)) }
            if CallerDeadline.passed(waitUntil) {
                let detail = h.lastConnectionError.map { ": last attempt failed: \($0.description)" } ?? ""
                return .some(ClientError(.timeout, "no connection to \(configuration.endpoint.host):\(configuration.endpoint.port) within \(reportingMillis ?? timeoutMillis) ms" + detail))
            }
            return nil
        }
    }

    // MARK: - Close

    /// Stops accepting notifications, lets those in flight finish for up to `drainMillis`, ends
    /// every remaining one with a FAILED result (Cancelled / CancelledInFlight), closes the
    /// connections and joins the I/O thread. Results stay readable with `poll`. Safe to call
    /// more than once and from several threads; later calls wait for the first to finish.
    /// Returns false, doing nothing, when called on the client's own I/O thread (from the result
    /// callback): that thread can neither drain nor join itself.
    @discardableResult
    public func close(drainMillis: Int32) -> Bool {
        if isIOThread { return false }
        finishClosing(joining: startClosing(drainMillis: drainMillis))
        return true
    }

    /// The first half of close: no more sends, the I/O thread starts draining. Returns true
    /// for the call that must join the thread in finishClosing: the one that started the
    /// close, or the first after a `beginClose`.
    /// PushClientGroup starts every I/O thread's drain before waiting for any.
    func startClosing(drainMillis: Int32) -> Bool {
        let (started, joins) = handoff.withLockNotifying { h, waiters -> (Bool, Bool) in
            guard h.lifecycle.isOpen else {
                // A close begun by `beginClose` left the join to the next close.
                defer { h.joinOwed = false }
                return (false, h.joinOwed)
            }
            h.lifecycle = .closing(drainMillis: max(0, drainMillis))
            waiters.broadcast()
            return (true, true)
        }
        if started { loop.wake() }
        return joins
    }

    /// Starts the close (as `close`) without waiting for it: for a caller that must not block
    /// (the Swift API's `shutdown`, which awaits the last result instead). The I/O thread is
    /// joined by the next `close`, which then returns at once. False when a close had begun.
    @discardableResult
    package func beginClose(drainMillis: Int32) -> Bool {
        let started = handoff.withLockNotifying { h, waiters -> Bool in
            guard h.lifecycle.isOpen else { return false }
            h.lifecycle = .closing(drainMillis: max(0, drainMillis))
            h.joinOwed = true
            waiters.broadcast()
            return true
        }
        if started { loop.wake() }
        return started
    }

    /// The second half of close: joins the I/O thread (the call that started the close) or
    /// waits until it has finished (any other).
    func finishClosing(joining: Bool) {
        if joining {
            pthread_join(thread, nil)
            return
        }
        handoff.withLock(waitingUntil: nil) { h, _ in h.lifecycle == .finished ? () : nil }
    }

    /// Whether the calling thread is this client's I/O thread (the result callback runs there).
    public var isIOThread: Bool { pthread_equal(pthread_self(), thread) != 0 }

    /// Counters so far.
    public func counterSnapshot() -> ClientCounters {
        handoff.withLock { $0.counters }
    }

    /// Asks the I/O thread to end FAILED Cancelled the notifications with a tag in `tags` that
    /// it has not written yet (their caller stopped waiting: a cancelled Swift task); what was
    /// written ends as it would. Never waits; cheap (one lock, a wake-up). A cancel that finds
    /// nothing (all written, or ended) does nothing: each notification keeps one outcome.
    package func cancelUnsent(tags: ClosedRange<UInt64>) {
        let wake = handoff.withLock { h -> Bool in
            guard h.lifecycle != .finished else { return false }
            h.cancelledTags.append(tags)
            defer { h.ioIdle = false }
            return h.ioIdle
        }
        if wake { loop.wake() }
    }
}
