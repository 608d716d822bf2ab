import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A task executor that is one thread of its own, for test code that blocks (a raw socket's
/// reads, a server's start) without taking one of the cooperative pool's few threads, while
/// staying inside the test's task: `#expect` there is recorded for the test that runs it.
/// (A bare `Thread` or a Dispatch queue has no task: Swift Testing records an issue made there
/// for «unknown» test, and the test itself still passes — issue 36.)
public final class OwnThread: TaskExecutor, @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var stopping = false

    /// Starts the thread; it ends after `stop()` once its queue is empty.
    public init() {
        var thread = pthread_t()
        let context = Unmanaged.passRetained(self).toOpaque()
        let rc = pthread_create(&thread, nil, { arg in
            Unmanaged<OwnThread>.fromOpaque(arg!).takeRetainedValue().run()
            return nil
        }, context)
        precondition(rc == 0, "pthread_create: \(rc)")
        pthread_detach(thread)
    }

    /// Takes a job of a task that prefers this executor.
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    /// Lets the thread end once it has run what it was given.
    public func stop() {
        condition.lock()
        stopping = true
        condition.signal()
        condition.unlock()
    }

    private func run() {
        while true {
            condition.lock()
            while jobs.isEmpty && !stopping { condition.wait() }
            if jobs.isEmpty { condition.unlock(); return }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}

/// Runs `body` on a thread of its own (`OwnThread`) inside the calling task, and returns its
/// result: blocking code that may block as long as it needs, and whose expectations count
/// for the test that runs it.
public func onOwnThread<T: Sendable>(_ body: @Sendable () throws -> T) async throws -> T {
    let thread = OwnThread()
    defer { thread.stop() }
    return try await withTaskExecutorPreference(thread) { try body() }
}
