#if canImport(Glibc)
import Glibc
#endif
import PushCore

/// One long-lived library thread that runs blocking calls one after another, for the async
/// calls whose work blocks (a client's channel calls, which take turns on one connection
/// anyway): started by the first call, it sleeps between calls and ends with `stop` (the
/// client's end). However many calls wait, it is one thread.
///
/// A caller whose task is cancelled is resumed at once with nil: a call that had not started
/// is then never run; one running goes on to its end on the thread, and its value is dropped.
///
/// `stop` joins the thread when it is idle: the thread has used OpenSSL (the calls sign tokens
/// and do TLS), and a thread that ends while the process exits frees OpenSSL's per-thread state
/// beside OpenSSL's own clean-up at exit, which crashed `swiftpush channels` once (SIGSEGV
/// after its answer was printed, on a loaded machine).
final class CallThread: @unchecked Sendable {
    /// A call: the blocking work, which returns what then resumes its caller (run once the
    /// thread counts as idle again, so that the caller's `stop` can join it).
    private typealias Call = @Sendable () -> (@Sendable () -> Void)

    private let mutex = PThreadMutex()
    /// Calls to run, in order; guarded by `mutex`.
    private var calls: [Call] = []
    private var started = false
    private var stopped = false
    /// The thread, until `stop` joins or detaches it; guarded by `mutex`.
    private var thread: pthread_t?
    /// A call's work is running on the thread; guarded by `mutex`.
    private var running = false

    /// Runs `work` on the thread and returns its value to the awaiting task (whose thread is
    /// free meanwhile); nil when the task was cancelled.
    func run<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T? {
        let waiter = OneWaiter<T>()
        return await withTaskCancellationHandler {
            await withUnsafeContinuation { (continuation: UnsafeContinuation<T?, Never>) in
                guard waiter.wait(continuation) else { return }
                enqueue {
                    guard waiter.isWaiting else { return {} }
                    let value = work()
                    return { waiter.resume(value) }
                }
            }
        } onCancel: {
            waiter.resume(nil)
        }
    }

    /// Ends the thread once its current call (if any) returns; calls still queued are run on
    /// a thread of their own (rare: a call racing the client's end). An idle thread is joined
    /// here (it ends at once); one running a call, or this very thread, is detached instead, so
    /// that `stop` never waits for a call.
    func stop() {
        let (left, thread, join) = mutex.withLock { () -> ([Call], pthread_t?, Bool) in
            stopped = true
            mutex.broadcast()
            defer { calls = []; self.thread = nil }
            let join = self.thread.map { !running && pthread_equal($0, pthread_self()) == 0 } ?? false
            return (calls, self.thread, join)
        }
        for call in left { LibraryThread.start { call()() } }
        if let thread {
            if join { pthread_join(thread, nil) } else { pthread_detach(thread) }
        }
    }

    private func enqueue(_ call: @escaping Call) {
        let start = mutex.withLock { () -> Bool? in
            if stopped { return nil }
            calls.append(call)
            if started { mutex.broadcast(); return false }
            started = true
            // Made under the lock, so that `stop` always finds it to join or detach (its loop
            // takes the lock first, and waits for this one to be let go).
            thread = LibraryThread.spawn { [self] in loop() }
            return thread == nil
        }
        switch start {
        case nil: LibraryThread.start { call()() } // after stop: the call still gets its answer
        case true?: loop() // no thread could be made: the caller's runs the calls
        case false?: break
        }
    }

    /// The thread: runs calls in order, sleeps while there are none, ends at `stop`.
    private func loop() {
        while true {
            let next = mutex.withLock { () -> Call? in
                while calls.isEmpty && !stopped { _ = mutex.wait(untilMonotonicNanos: nil) }
                if calls.isEmpty { return nil }
                running = true
                return calls.removeFirst()
            }
            guard let next else { return }
            let resume = next()
            mutex.withLock { running = false }
            resume()
        }
    }
}

/// One waiting task's continuation, resumed exactly once: by the value, or by a cancel (nil),
/// whichever comes first.
final class OneWaiter<T: Sendable>: Sendable {
    private enum State {
        case idle
        case waiting(UnsafeContinuation<T?, Never>)
        case done
    }
    private let state = Locked(State.idle)

    /// Stores the continuation; false (having resumed it with nil) when a cancel came first.
    func wait(_ continuation: UnsafeContinuation<T?, Never>) -> Bool {
        let cancelled = state.withLock { s -> Bool in
            if case .done = s { return true }
            s = .waiting(continuation)
            return false
        }
        if cancelled { continuation.resume(returning: nil) }
        return !cancelled
    }

    /// Still waited for (not cancelled, not resumed).
    var isWaiting: Bool {
        state.withLock { s in
            if case .waiting = s { return true }
            return false
        }
    }

    /// Resumes the waiter with `value` (nil: cancelled), unless it was resumed already.
    func resume(_ value: T?) {
        let c = state.withLock { s -> UnsafeContinuation<T?, Never>? in
            defer { s = .done }
            if case .waiting(let c) = s { return c }
            return nil
        }
        c?.resume(returning: value)
    }
}
