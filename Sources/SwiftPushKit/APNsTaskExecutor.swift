#if canImport(Glibc)
import Glibc
#endif
import PushCore
import Synchronization

/// A task executor of the client's own (`APNsClient.taskExecutor`): one long-lived thread that
/// runs the tasks which prefer it. Tasks that await many `send`s run faster on it than on the
/// cooperative pool: a result resumes its task with a hand-off to this one thread (no job of
/// the pool's, no pool thread woken per task), and the sends of every task that one batch of
/// results resumed are handed to the client together, once that batch has run, without a job
/// scheduled for it.
///
/// ```swift
/// await withTaskExecutorPreference(client.taskExecutor) {
///     await withTaskGroup(of: Void.self) { group in
///         for note in notes { group.addTask { _ = try? await client.send(note) } }
///     }
/// }
/// ```
///
/// (`Task(executorPreference: client.taskExecutor) { ... }` starts one task on it; the children
/// of a task group inherit the preference.)
///
/// - One thread runs every task that prefers it, one job at a time: code that blocks the
///   thread (a lock held long, a blocking read, `DispatchSemaphore.wait`) holds up every other
///   task on it until it returns, and the notifications they sent just before (handed to the
///   client once the tasks taken with them have run); run such code elsewhere (a task without
///   the preference, a thread of your own). The client itself never waits for this thread:
///   sends from elsewhere, results, deadlines, cancellation and `shutdown` go on while it is
///   blocked, and the tasks it would have run are resumed there once it is free.
/// - The thread starts with the first task that runs here and ends at `APNsClient.shutdown`
///   (or when the client is dropped), after the job it is running; tasks that still prefer the
///   executor then run on the cooperative pool (nothing is lost, only the hand-off is the
///   pool's again).
public final class APNsTaskExecutor: TaskExecutor, @unchecked Sendable {
    private enum Life {
        /// No task has run here yet: no thread.
        case idle
        case running
        /// Stopped (or no thread could be made): jobs go to the global executor.
        case stopped
    }

    private let mutex = PThreadMutex()
    /// Guarded by `mutex`: jobs waiting to run, in order.
    private var jobs: [UnownedJob] = []
    /// Guarded by `mutex`.
    private var life = Life.idle
    /// Guarded by `mutex`: the thread waits on the condition (an enqueue must wake it).
    private var sleeping = false
    /// Guarded by `mutex`: how many `holdingWakes` run now (their enqueues wake the thread
    /// once, at their end).
    private var held = 0
    private var stopping = false
    /// The thread's id while it runs, 0 otherwise: code on the thread learns it is there.
    private let threadID = Atomic<UInt>(0)
    /// Whether the thread has ended (for the tests).
    let ended = Atomic<Bool>(false)
    /// Owned by the thread: what runs once the jobs it took last have run.
    private var afterJobs: [() -> Void] = []

    init() {}

    /// Takes a job of a task that prefers this executor: it runs on the executor's thread, in
    /// order, or on the global executor once the client has shut down.
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        mutex.lock()
        switch life {
        case .running:
            jobs.append(job)
            if sleeping && held == 0 {
                sleeping = false
                mutex.broadcast()
            }
            mutex.unlock()
        case .idle:
            jobs.append(job)
            life = .running
            mutex.unlock()
            if LibraryThread.spawn({ [self] in run() }).map({ pthread_detach($0) }) == nil {
                // No thread: what was queued runs on the pool, as everything after it.
                mutex.withLock { life = .stopped }
                forwardQueued()
                ended.store(true, ordering: .releasing)
            }
        case .stopped:
            mutex.unlock()
            globalConcurrentExecutor.enqueue(ExecutorJob(job))
        }
    }

    /// Runs `body` (which resumes many tasks: a batch of results handed out) and wakes the
    /// thread once at its end, not at its first enqueue: woken at once, on a busy core the
    /// thread would run each task as it came, a switch of threads per task. The thread takes
    /// no job meanwhile, so the tasks `body` resumed run as one batch.
    func holdingWakes(_ body: () -> Void) {
        mutex.withLock { held += 1 }
        body()
        mutex.withLock {
            held -= 1
            if held == 0 && sleeping && !jobs.isEmpty {
                sleeping = false
                mutex.broadcast()
            }
        }
    }

    /// Whether the caller runs on the executor's thread.
    var isCurrent: Bool {
        let id = threadID.load(ordering: .relaxed)
        return id != 0 && id == UInt(pthread_self())
    }

    /// On the executor's thread: runs `body` there once the jobs taken with the current one
    /// have run (once per batch of tasks, not per task), and returns true. Elsewhere: false,
    /// `body` not kept.
    func afterCurrentJobs(_ body: @escaping () -> Void) -> Bool {
        guard isCurrent else { return false }
        afterJobs.append(body)
        return true
    }

    /// Ends the thread after the job it is running (no thread is made after this); what is
    /// queued, and every later job, runs on the global executor. Does not wait: it may be
    /// called from a task on the executor itself.
    func stop() {
        mutex.withLock {
            switch life {
            case .idle:
                life = .stopped
                ended.store(true, ordering: .releasing)
            case .running:
                stopping = true
                mutex.broadcast()
            case .stopped:
                break
            }
        }
    }

    /// The thread: runs what was queued, batch by batch; after each batch what asked to run
    /// then (the sends the batch made, handed to the client together).
    private func run() {
        threadID.store(UInt(pthread_self()), ordering: .relaxed)
        var batch: [UnownedJob] = []
        let me = asUnownedTaskExecutor()
        while true {
            mutex.lock()
            // (While a batch of results is being handed out, its tasks are taken together.)
            while (jobs.isEmpty || held > 0) && !stopping {
                sleeping = true
                _ = mutex.wait(untilMonotonicNanos: nil)
            }
            sleeping = false
            if stopping {
                life = .stopped
                mutex.unlock()
                break
            }
            swap(&batch, &jobs)
            mutex.unlock()
            for job in batch { job.runSynchronously(on: me) }
            batch.removeAll(keepingCapacity: true)
            while !afterJobs.isEmpty {
                let after = afterJobs
                afterJobs = []
                for body in after { body() }
            }
        }
        threadID.store(0, ordering: .relaxed)
        forwardQueued()
        ended.store(true, ordering: .releasing)
    }

    /// Hands what is queued to the global executor (the executor has stopped).
    private func forwardQueued() {
        var left: [UnownedJob] = []
        mutex.withLock { swap(&left, &jobs) }
        for job in left { globalConcurrentExecutor.enqueue(ExecutorJob(job)) }
    }
}
