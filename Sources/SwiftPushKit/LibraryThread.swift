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
