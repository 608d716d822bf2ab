import PushCore
#if canImport(Glibc)
import Glibc
#endif

/// The thread the worker's HTTP server runs its tasks on: a `TaskExecutor` that is one thread
/// of its own. Hummingbird does its socket I/O on SwiftNIO's event loop threads but runs each
/// connection and each handler as a Swift task, by default on the cooperative pool, whose
/// few threads (one per core) anything else in the process may hold: there `/healthz` went
/// unanswered while the pool was busy, exactly when a 503 was wanted (issue 36). Tasks started
/// with this as their executor preference, and their child tasks, run here instead.
final class ServerThread: TaskExecutor, @unchecked Sendable {
    private let lock = PThreadMutex()
    private var jobs: [UnownedJob] = []
    private var head = 0
    private var stopping = false

    /// Starts the thread; it ends after `stop()`, once its queue is empty.
    init() {
        var thread = pthread_t()
        let context = Unmanaged.passRetained(self).toOpaque()
        let rc = pthread_create(&thread, nil, { arg in
            Unmanaged<ServerThread>.fromOpaque(arg!).takeRetainedValue().run()
            return nil
        }, context)
        precondition(rc == 0, "pthread_create: \(rc)")
        pthread_detach(thread)
    }

    /// Takes a job of a task that prefers this executor.
    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        lock.withLock {
            jobs.append(job)
            lock.broadcast()
        }
    }

    /// Lets the thread end once it has run what it was given.
    func stop() {
        lock.withLock {
            stopping = true
            lock.broadcast()
        }
    }

    private func run() {
        while let job = next() {
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }

    /// The next job, waiting for one; nil once stopped with nothing left.
    private func next() -> UnownedJob? {
        lock.withLock {
            while head == jobs.count && !stopping { _ = lock.wait(untilMonotonicNanos: nil) }
            guard head < jobs.count else { return nil }
            let job = jobs[head]
            head += 1
            if head == jobs.count { jobs.removeAll(keepingCapacity: true); head = 0 }
            return job
        }
    }
}
