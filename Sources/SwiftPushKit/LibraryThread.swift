#if canImport(Glibc)
import Glibc
#endif

/// Starts the library's own threads: the long-lived ones of a client (`ResultRouter`'s results
/// thread and its feeder, `ConnectionWaits`, `CallThread`), which do the waiting that must not
/// block a cooperative thread of Swift concurrency. No call starts a thread of its own.
enum LibraryThread {
    /// Starts a detached thread running `body`. A thread that cannot be made runs `body` on the
    /// caller's, so the work is never lost (only its waiting is then the caller's).
    static func start(_ body: @escaping @Sendable () -> Void) {
        if let thread = spawn(body) { pthread_detach(thread) } else { body() }
    }

    /// Starts a thread running `body` that its owner joins (`pthread_join`) or detaches; nil,
    /// with `body` not run, when no thread could be made. A thread that used OpenSSL (a channel
    /// call signs tokens and does TLS on it) frees OpenSSL's per-thread state as it ends: joined
    /// before the process exits, that cannot run beside OpenSSL's own clean-up at exit.
    static func spawn(_ body: @escaping @Sendable () -> Void) -> pthread_t? {
        let box = Unmanaged.passRetained(Body(body)).toOpaque()
        var thread = pthread_t()
        let rc = pthread_create(&thread, nil, { arg in
            Unmanaged<Body>.fromOpaque(arg!).takeRetainedValue().body()
            return nil
        }, box)
        if rc != 0 {
            Unmanaged<Body>.fromOpaque(box).release()
            return nil
        }
        return thread
    }

    private final class Body: Sendable {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
}
