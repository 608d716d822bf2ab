import PushCore

/// One long-lived library thread that runs blocking calls one after another, for the async
/// calls whose work blocks (a client's channel calls, which take turns on one connection
/// anyway): started by the first call, it sleeps between calls and ends with `stop` (the
/// client's end). However many calls wait, it is one thread.
///
/// A caller whose task is cancelled is resumed at once with nil: a call that had not started
/// is then never run; one running goes on to its end on the thread, and its value is dropped.
final class CallThread: @unchecked Sendable {
    private let mutex = PThreadMutex()
    /// Calls to run, in order (each resumes its own caller); guarded by `mutex`.
    private var calls: [@Sendable () -> Void] = []
    private var started = false
    private var stopped = false

    /// Runs `work` on the thread and returns its value to the awaiting task (whose thread is
    /// free meanwhile); nil when the task was cancelled.
    func run<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T? {
        let waiter = OneWaiter<T>()
        return await withTaskCancellationHandler {
            await withUnsafeContinuation { (continuation: UnsafeContinuation<T?, Never>) in
                guard waiter.wait(continuation) else { return }
                enqueue { if waiter.isWaiting { waiter.resume(work()) } }
            }
        } onCancel: {
            waiter.resume(nil)
        }
    }

    /// Ends the thread once its current call (if any) returns; calls still queued are run on
    /// a thread of their own (rare: a call racing the client's end).
    func stop() {
        let left = mutex.withLock { () -> [@Sendable () -> Void] in
            stopped = true
            mutex.broadcast()
            defer { calls = [] }
            return calls
        }
        for call in left { LibraryThread.start(call) }
    }

    private func enqueue(_ call: @escaping @Sendable () -> Void) {
        let start = mutex.withLock { () -> Bool? in
            if stopped { return nil }
            calls.append(call)
            if started { mutex.broadcast(); return false }
            started = true
            return true
        }
        switch start {
        case nil: LibraryThread.start(call) // after stop: the call still gets its answer
        case true?: LibraryThread.start { [self] in loop() }
        case false?: break
        }
    }

    /// The thread: runs calls in order, sleeps while there are none, ends at `stop`.
    private func loop() {
        while true {
            let next = mutex.withLock { () -> (@Sendable () -> Void)? in
                while calls.isEmpty && !stopped { _ = mutex.wait(untilMonotonicNanos: nil) }
                if calls.isEmpty { return nil }
                return calls.removeFirst()
            }
            guard let next else { return }
            next()
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
