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
