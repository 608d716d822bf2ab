import PushCore
import PushClientCore
import Synchronization

/// What lets `APNsClient`'s async calls wait without blocking a cooperative thread: it submits
/// their notifications to the engine without waiting, and threads of the library's own do the
/// waiting: one takes every result (`APNsEngine.take`) and hands each to whoever waits for it;
/// another, while notifications wait for a free slot, submits them as slots free up.
///
/// - Tags: a waiter (one `send`, or one batch of up to 2^24 notifications) has an id; its
///   notifications carry `id << 24 | index`, so a result finds its waiter with one lookup.
/// - Back-pressure: what finds no free slot waits in `pending`, in order; the feeder thread
///   (started when something waits, ending when nothing does) submits it, waiting for room on
///   the client's own condition. A sender submits directly only while nothing waits, so the
///   order of sends is kept.
/// - Cancellation: a cancelled `send` (or a batch whose iterating task is cancelled) stops
///   waiting at once; its waiter becomes `.cancelled`, which drops the results still to come
///   (counted in the metrics all the same, by `take`). What was never written is not sent: the
///   engine ends it Cancelled (`cancelUnsent`), and what still waits here for a slot is skipped
///   by the feeder and counted Cancelled. A cancel may race a submission, so a cancelled
///   sender and the feeder look again after submitting and ask the engine once more (asking
///   twice finds nothing); a batch's direct submissions need not (its cancel handler is set
///   after them).
/// - Close: once the engine has finished and every result was handed out, what still waits
///   for a slot is refused (`.closed`), and the results thread ends.
final class ResultRouter: Sendable {
    static let indexBits = 24
    static let maxBatch = 1 << indexBits

    /// Who waits for results.
    private enum Waiter {
        /// One `send`: resumed with its result (or its refusal); nil when it was cancelled.
        case single(UnsafeContinuation<Result<PushResult, PushError>?, Never>)
        /// A batch's notifications `offset..<offset + count` (one chunk of it); `remaining`
        /// have no element yet.
        case batch(BatchState, offset: Int, remaining: Int)
        /// Nobody waits any more (a cancelled task): `remaining` results are still to come
        /// (or to be skipped); they are dropped.
        case cancelled(remaining: Int)
    }

    /// Notifications that found no free slot, in order: `batch[next...]` with tags from
    /// `id << 24` (a single send is a batch of one).
    private struct Pending {
        let id: UInt64
        let batch: NumberedBatch
        var next: Int
    }

    /// What a send does once its notification is in the outbox (or not, `cancelled`).
    private enum AfterQueue {
        /// Its task was cancelled first: nothing was queued.
        case cancelled
        /// The first in an empty outbox: it schedules the flush job.
        case scheduleFlush
        /// It filled the outbox to `inlineFlush`: it submits the outbox itself.
        case flushNow
        /// A flush is scheduled already.
        case nothing
    }

    /// How many sends the outbox holds before the send that adds the last one submits them
    /// itself instead of leaving them to the flush job. The job runs only after every task
    /// that one batch of results woke (up to 1,024) has sent, so the I/O thread would get
    /// them all at once, late, and the connection would idle meanwhile: submitted in runs of
    /// 64, the first requests are written while later tasks are still sending. It costs no
    /// more wake-ups: with 1,000 tasks it took context switches per notification from 0.053
    /// to 0.012 and futex calls from 0.052 to 0.015 (fewer flush jobs, each of which woke a
    /// thread of the pool).
    static let inlineFlush = 64

    private struct State {
        var waiters = WaiterTable<Waiter>()
        /// Single sends not yet handed to the engine, tagged `id << 24`: the next flush submits
        /// them together (one engine call, one wake of its I/O thread, for many tasks' sends).
        var outbox: [TaggedNotification] = []
        /// A flush is scheduled that has not taken the outbox yet.
        var flushScheduled = false
        /// A flush is asked of the client's task executor (`APNsTaskExecutor.afterCurrentJobs`)
        /// that has not taken the outbox yet: apart from `flushScheduled`, so that a task that
        /// blocks the executor's thread never holds up the sends of tasks elsewhere.
        var executorFlushScheduled = false
        /// A single send was cancelled since the outbox was last taken: the flush looks for
        /// cancelled waiters among what it took.
        var outboxMayHoldCancelled = false
        /// How many single sends were cancelled so far: a flush that sees it move while it
        /// submits asks the engine to cancel what it submitted of theirs.
        var cancels = 0
        var pending: [Pending] = []
        var pendingHead = 0
        var feederRunning = false
        /// The engine has finished and every result was handed out.
        var finished = false
        var finishWaiters: [UnsafeContinuation<Void, Never>] = []

        var hasPending: Bool { pendingHead < pending.count }

        mutating func popPending() {
            pendingHead += 1
            if pendingHead == pending.count {
                pending.removeAll(keepingCapacity: true)
                pendingHead = 0
            }
        }

        /// Queues `entry`; true when the caller must start the feeder.
        mutating func queue(_ entry: Pending) -> Bool {
            pending.append(entry)
            if feederRunning { return false }
            feederRunning = true
            return true
        }
    }

    let engine: APNsEngine
    /// The client's task executor (`APNsClient.taskExecutor`): sends made on its thread are
    /// flushed by it, once per batch of tasks it ran.
    let executor = APNsTaskExecutor()
    private let state = Locked(State())
    /// Waiter ids (taken without the lock: a `send`'s cancel handler needs its id first).
    private let nextID = Atomic<UInt64>(1)

    private func newID() -> UInt64 { nextID.wrappingAdd(1, ordering: .relaxed).oldValue }

    init(engine: APNsEngine) {
        self.engine = engine
        LibraryThread.start { [self] in takeResults() }
    }

    // MARK: - Sending

    /// Sends one notification and waits (suspended, no thread held) for its result; nil when
    /// the task was cancelled (at once: the notification is not sent if it was not written).
    ///
    /// The notification goes to the outbox, not to the engine: the first send into an empty
    /// outbox schedules a flush (a job of its own on the global executor, which runs after the
    /// tasks already waiting to run; on the client's task executor, a step of its thread after
    /// the tasks it runs now), so the sends of the many tasks that one batch of results
    /// woke are submitted in one engine call. One lock per send here, one per flush there.
    /// The send that fills the outbox to `inlineFlush` submits it itself, at once.
    nonisolated(nonsending) func send(_ notification: PushNotification) async -> Result<PushResult, PushError>? {
        if Task.isCancelled {
            engine.recordCancelledUnsubmitted(1)
            return nil
        }
        let id = newID()
        let onExecutor = executor.isCurrent
        return await withTaskCancellationHandler {
            await withUnsafeContinuation { continuation in
                let next = state.withLock { s -> AfterQueue in
                    // The task's flag is set before its cancel handler runs, and the handler
                    // takes this lock: a task not cancelled here has its cancel (if any) find
                    // its waiter.
                    if Task.isCancelled { return .cancelled }
                    s.waiters[id] = .single(continuation)
                    s.outbox.append(TaggedNotification(tag: id << Self.indexBits, notification: notification))
                    if s.outbox.count >= Self.inlineFlush { return .flushNow }
                    if onExecutor {
                        if s.executorFlushScheduled { return .nothing }
                        s.executorFlushScheduled = true
                        return .scheduleFlush
                    }
                    if s.flushScheduled { return .nothing }
                    s.flushScheduled = true
                    return .scheduleFlush
                }
                switch next {
                case .cancelled:
                    // Cancelled before it was queued: never sent, counted Cancelled.
                    engine.recordCancelledUnsubmitted(1)
                    continuation.resume(returning: nil)
                case .scheduleFlush:
                    // On the client's executor, after the tasks that thread runs now (they
                    // are the ones a batch of results resumed); elsewhere, as a job of its own.
                    if onExecutor && executor.afterCurrentJobs({ [self] in flush(scheduledOnExecutor: true) }) { break }
                    Task.detached(priority: Task.currentPriority) { [self] in flush(scheduledOnExecutor: onExecutor) }
                case .flushNow:
                    flush(scheduledOnExecutor: nil)
                case .nothing:
                    break
                }
            }
        } onCancel: {
            cancel(id: id)
        }
    }

    /// Submits the outbox in one engine call (what finds no slot waits for the feeder, in
    /// order); a notification that breaks a rule alone is refused. `scheduledOnExecutor`: this
    /// is the flush job (false) or the executor's flush (true); nil, a send's inline flush,
    /// which leaves those scheduled, for what comes after it.
    private func flush(scheduledOnExecutor: Bool?) {
        var skipped = 0
        let (items, queueAll, cancelsBefore) = state.withLock { s -> ([TaggedNotification], Bool, Int) in
            switch scheduledOnExecutor {
            case true?: s.executorFlushScheduled = false
            case false?: s.flushScheduled = false
            case nil: break
            }
            var items: [TaggedNotification] = []
            swap(&items, &s.outbox)
            // Room for a run of sends without growing (growing copies what was appended).
            s.outbox.reserveCapacity(Swift.max(items.count, Self.inlineFlush))
            if s.outboxMayHoldCancelled {
                s.outboxMayHoldCancelled = false
                // Waiters cancelled while queued here: never sent.
                items.removeAll { item in
                    let id = item.tag >> UInt64(Self.indexBits)
                    guard case .cancelled? = s.waiters[id] else { return false }
                    s.waiters[id] = nil
                    skipped += 1
                    return true
                }
            }
            return (items, s.hasPending, s.cancels)
        }
        engine.recordCancelledUnsubmitted(skipped)
        var next = 0
        // Behind notifications that wait for a slot: in order, after them.
        while !queueAll && next < items.count {
            let r = engine.submit(TaggedBatch(items: items[...]), from: next)
            next += r.accepted
            guard let error = r.error else { break }
            if error.code == .queueFull { break }
            refuse(id: items[next].tag >> UInt64(Self.indexBits), index: 0, error)
            next += 1
        }
        if next > 0 {
            // A cancel that came while these were submitted may have reached the engine first.
            let cancelled = state.withLock { s -> [UInt64] in
                guard s.cancels != cancelsBefore else { return [] }
                return items[..<next].compactMap { item in
                    let id = item.tag >> UInt64(Self.indexBits)
                    if case .cancelled? = s.waiters[id] { return id }
                    return nil
                }
            }
            for id in cancelled { engine.cancelUnsent(tags: Self.tags(of: id)) }
        }
        guard next < items.count else { return }
        let rest = items[next...].map { item in
            Pending(id: item.tag >> UInt64(Self.indexBits),
                    batch: NumberedBatch(notifications: [item.notification], firstTag: item.tag), next: 0)
        }
        if state.withLock({ s in rest.reduce(false) { s.queue($1) || $0 } }) {
            LibraryThread.start { [self] in feed() }
        }
    }

    /// Waiter `id`'s task was cancelled: it stops waiting now, and what it has not had
    /// written is cancelled.
    private func cancel(id: UInt64) {
        let resume = state.withLock { s -> (UnsafeContinuation<Result<PushResult, PushError>?, Never>?, Bool) in
            switch s.waiters[id] {
            case .single(let c)?:
                s.waiters[id] = .cancelled(remaining: 1)
                // It may still be in the outbox (the flush then drops it) or being submitted
                // (the flush then asks the engine again).
                s.outboxMayHoldCancelled = true
                s.cancels += 1
                return (c, true)
            case .batch(_, _, let remaining)?:
                s.waiters[id] = .cancelled(remaining: remaining)
                return (nil, true)
            case .cancelled?, nil:
                return (nil, false) // ended already, or not queued yet (the sender sees its flag)
            }
        }
        resume.0?.resume(returning: nil)
        if resume.1 { engine.cancelUnsent(tags: Self.tags(of: id)) }
    }

    /// The tags of waiter `id`'s notifications.
    private static func tags(of id: UInt64) -> ClosedRange<UInt64> {
        (id << indexBits)...(id << indexBits | UInt64(maxBatch - 1))
    }

    /// After submitting for waiter `id`: if it was cancelled meanwhile, its cancel may have
    /// reached the engine before the submission did; ask again.
    private func recheckCancelled(_ id: UInt64) {
        let cancelled = state.withLock { s -> Bool in
            if case .cancelled? = s.waiters[id] { return true }
            return false
        }
        if cancelled { engine.cancelUnsent(tags: Self.tags(of: id)) }
    }

    /// Sends a batch: up to `directLimit` notifications from the caller's thread, without
    /// waiting; the rest in order as slots free up (the feeder thread).
    func send(contentsOf notifications: [PushNotification]) -> PushBatchResults {
        let results = BatchState(count: notifications.count)
        var ids: [UInt64] = []
        var offset = 0
        while offset < notifications.count {
            let end = min(offset + Self.maxBatch, notifications.count)
            let id = newID()
            let waitsAlready = state.withLock { s -> Bool in
                s.waiters[id] = .batch(results, offset: offset, remaining: end - offset)
                return s.hasPending
            }
            let part = offset == 0 && end == notifications.count ? notifications : Array(notifications[offset..<end])
            let batch = NumberedBatch(notifications: part, firstTag: id << Self.indexBits)
            submitOrQueue(Pending(id: id, batch: batch, next: 0), direct: waitsAlready ? 0 : Self.directLimit)
            ids.append(id)
            offset = end
        }
        // The iterating task's cancellation cancels what the batch has not had written.
        results.setCancelHandler { [weak self, ids] in for id in ids { self?.cancel(id: id) } }
        return PushBatchResults(state: results)
    }

    /// The most a sender's own thread submits of a batch: a cooperative thread spends a few
    /// milliseconds on it at most; the feeder thread submits the rest.
    static let directLimit = 4096

    /// Submits up to `direct` notifications of `entry` without waiting (refusing the invalid
    /// ones), then queues what is left for the feeder.
    private func submitOrQueue(_ entry: Pending, direct: Int) {
        var entry = entry
        var budget = direct
        while budget > 0 && entry.next < entry.batch.count {
            let end = min(entry.next + budget, entry.batch.count)
            let r = engine.submit(LimitedBatch(base: entry.batch, end: end), from: entry.next)
            entry.next += r.accepted
            budget -= r.accepted
            guard let error = r.error else { continue }
            if error.code == .queueFull { break }
            refuse(id: entry.id, index: entry.next, error)
            entry.next += 1
            budget -= 1
        }
        if entry.next == entry.batch.count { return }
        if state.withLock({ $0.queue(entry) }) {
            LibraryThread.start { [self] in feed() }
        }
    }

    /// The feeder thread: submits what waits, in order, waiting for room on the client's
    /// condition (a library thread may block); ends when nothing waits.
    private func feed() {
        while true {
            var skipped = 0
            let next = state.withLock { s -> Pending? in
                while s.hasPending {
                    let entry = s.pending[s.pendingHead]
                    guard case .cancelled(let remaining)? = s.waiters[entry.id] else { return entry }
                    // Its task was cancelled: what was not submitted never will be.
                    let left = entry.batch.count - entry.next
                    skipped += left
                    s.waiters[entry.id] = remaining > left ? .cancelled(remaining: remaining - left) : nil
                    s.popPending()
                }
                s.feederRunning = false
                return nil
            }
            engine.recordCancelledUnsubmitted(skipped)
            guard var entry = next else { return }
            let r = engine.submit(entry.batch, from: entry.next, waitingUpTo: .seconds(1))
            entry.next += r.accepted
            if r.accepted > 0 { recheckCancelled(entry.id) }
            let error = r.error.flatMap { $0.code == .queueFull ? nil : $0 }
            if let error, error.code != .closed {
                // A rule the notification broke: it alone is refused.
                refuse(id: entry.id, index: entry.next, error)
                entry.next += 1
            }
            state.withLock { s in
                if entry.next == entry.batch.count { s.popPending() } else { s.pending[s.pendingHead] = entry }
            }
            // Closing: everything that waits is refused (from where each entry got to).
            if let error, error.code == .closed { return refuseAllPending(error) }
        }
    }

    /// Refuses every notification still waiting for a slot (the client is closing), and stops
    /// the feeder.
    private func refuseAllPending(_ error: PushError) {
        let left = state.withLock { s -> [Pending] in
            let left = Array(s.pending[s.pendingHead...])
            s.pending = []
            s.pendingHead = 0
            s.feederRunning = false
            return left
        }
        var refused: [(UInt64, Int, Result<PushResult, PushError>)] = []
        for entry in left {
            for i in entry.next..<entry.batch.count { refused.append((entry.id, i, .failure(error))) }
        }
        hand(refused)
    }

    /// Ends notification `index` of waiter `id` with `error` (refused at the send).
    private func refuse(id: UInt64, index: Int, _ error: PushError) {
        hand([(id, index, .failure(error))])
    }

    // MARK: - Results

    /// The results thread: takes every result and hands it to its waiter; once the engine has
    /// finished, refuses what still waits for a slot and ends.
    private func takeResults() {
        var taken: [TaggedResult] = []
        taken.reserveCapacity(1024)
        while true {
            switch engine.take(into: &taken, max: 1024, timeout: .seconds(3600)) {
            case .results:
                // Routed from where they were taken: a result is copied once more only into
                // its waiter's continuation.
                hand(taken.count, tag: { (taken[$0].tag >> UInt64(Self.indexBits), Int(taken[$0].tag & UInt64(Self.maxBatch - 1))) },
                     result: { .success(taken[$0].result) })
                taken.removeAll(keepingCapacity: true)
            case .timedOut:
                continue
            case .finished:
                finish()
                return
            }
        }
    }

    /// Hands results to their waiters: continuations are resumed and batches filled outside
    /// the lock.
    private func hand(_ results: [(id: UInt64, index: Int, Result<PushResult, PushError>)]) {
        hand(results.count, tag: { (results[$0].id, results[$0].index) }, result: { results[$0].2 })
    }

    /// `hand` for `count` results, result `i` tagged `tag(i)` (its waiter's id, its index
    /// there) and `result(i)`.
    private func hand(_ count: Int, tag: (Int) -> (id: UInt64, index: Int), result: (Int) -> Result<PushResult, PushError>) {
        var singles: [(UnsafeContinuation<Result<PushResult, PushError>?, Never>, Int)] = []
        singles.reserveCapacity(count)
        // A run of results of one batch is gathered in `run` and handed over whole (appending
        // to an array inside another would copy it each time).
        var batches: [(BatchState, [BatchResult])] = []
        var run: [BatchResult] = []
        var runBatch: BatchState?
        state.withLock { s in
            for i in 0..<count {
                let (id, index) = tag(i)
                // (One hash per result: the waiter is changed or removed where it was found.)
                guard let slot = s.waiters.slot(of: id) else {
                    continue // (cannot happen: every tag we submit has its waiter until its result)
                }
                switch s.waiters.value(at: slot) {
                case .single(let c):
                    s.waiters.remove(at: slot)
                    singles.append((c, i))
                case .batch(let b, let offset, let remaining):
                    if remaining > 1 {
                        s.waiters.setValue(.batch(b, offset: offset, remaining: remaining - 1), at: slot)
                    } else {
                        s.waiters.remove(at: slot)
                    }
                    if runBatch !== b {
                        if let runBatch { batches.append((runBatch, run)) }
                        runBatch = b
                        run = []
                    }
                    run.append(BatchResult(index: offset + index, result: result(i)))
                case .cancelled(let remaining):
                    // Its task stopped waiting; the result was counted by `take` all the same.
                    if remaining > 1 {
                        s.waiters.setValue(.cancelled(remaining: remaining - 1), at: slot)
                    } else {
                        s.waiters.remove(at: slot)
                    }
                }
            }
        }
        if let runBatch { batches.append((runBatch, run)) }
        // Tasks on the client's executor are queued there as they are resumed; its thread is
        // woken once for all of them.
        executor.holdingWakes {
            for (c, i) in singles { c.resume(returning: result(i)) }
        }
        for (b, rs) in batches { b.deliver(rs) }
    }

    /// The engine has finished: join its I/O threads (a `shutdown` only began the close),
    /// refuse what never found a slot, wake `waitUntilFinished`.
    private func finish() {
        engine.group.close(drainMillis: 0)
        refuseAllPending(PushError(.closed, "the client was closed before it was sent"))
        let waiters = state.withLock { s -> [UnsafeContinuation<Void, Never>] in
            s.finished = true
            defer { s.finishWaiters = [] }
            return s.finishWaiters
        }
        for w in waiters { w.resume() }
    }

    /// Returns once the engine has finished and every result was handed to its waiter.
    func waitUntilFinished() async {
        await withUnsafeContinuation { (c: UnsafeContinuation<Void, Never>) in
            let done = state.withLock { s -> Bool in
                if s.finished { return true }
                s.finishWaiters.append(c)
                return false
            }
            if done { c.resume() }
        }
    }
}

/// A batch cut short at `end` (what a drain may submit within its budget).
private struct LimitedBatch: NotificationBatch {
    let base: NumberedBatch
    let end: Int

    var count: Int { end }

    func withNotification(at index: Int, _ body: (borrowing NotificationView) -> NotificationRules.Violation?) -> NotificationRules.Violation? {
        base.withNotification(at: index, body)
    }
}
