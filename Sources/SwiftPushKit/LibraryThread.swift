#if canImport(Glibc)
import Glibc
#endif

/// Threads of the library's own, for the waits that must not block a cooperative thread of
/// Swift concurrency (an `async` call whose work blocks: connecting, closing, a channel call)
/// and for the loop that takes results (`ResultRouter`).
enum LibraryThread {
    /// Runs `work` on a new thread of its own and returns its value to the awaiting task (whose
    /// thread is free meanwhile). For rare, blocking calls: a thread per call.
    static func run<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withUnsafeContinuation { continuation in
            start { continuation.resume(returning: work()) }
        }
    }

    /// As `run`, for a wait the caller may give up: a cancelled task is resumed at once with
    /// nil (the work goes on to its end on its thread, and its value is dropped).
    static func runCancellable<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T? {
        let waiter = Locked<UnsafeContinuation<T?, Never>?>(nil)
        let done = Locked(false) // cancelled before the continuation was stored
        return await withTaskCancellationHandler {
            await withUnsafeContinuation { (continuation: UnsafeContinuation<T?, Never>) in
                let cancelledAlready = done.withLock { d -> Bool in
                    if d { return true }
                    waiter.withLock { $0 = continuation }
                    return false
                }
                if cancelledAlready { return continuation.resume(returning: nil) }
                start {
                    let value = work()
                    waiter.withLock { w -> UnsafeContinuation<T?, Never>? in
                        defer { w = nil }
                        return w
                    }?.resume(returning: value)
                }
            }
        } onCancel: {
            done.withLock { d -> UnsafeContinuation<T?, Never>? in
                d = true
                return waiter.withLock { w -> UnsafeContinuation<T?, Never>? in
                    defer { w = nil }
                    return w
                }
            }?.resume(returning: nil)
        }
    }

    /// Starts a detached thread running `body`. A thread that cannot be made runs `body` on the
    /// caller's, so the work is never lost (only its waiting is then the caller's).
    static func start(_ body: @escaping @Sendable () -> Void) {
        let box = Unmanaged.passRetained(Body(body)).toOpaque()
        var thread = pthread_t()
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        let rc = pthread_create(&thread, &attributes, { arg in
            Unmanaged<Body>.fromOpaque(arg!).takeRetainedValue().body()
            return nil
        }, box)
        pthread_attr_destroy(&attributes)
        if rc != 0 { Unmanaged<Body>.fromOpaque(box).takeRetainedValue().body() }
    }

    private final class Body: Sendable {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
}
