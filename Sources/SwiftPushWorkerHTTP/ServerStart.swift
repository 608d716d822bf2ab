import PushCore

/// How the server's start went, handed from its task to whoever started it: a thread that
/// blocks (`swiftpush worker` logs the port before it runs its loop) or a task that awaits.
final class ServerStart: @unchecked Sendable {
    private let lock = PThreadMutex()
    private var result: Result<Int, any Error>?
    private var waiters: [CheckedContinuation<Result<Int, any Error>, Never>] = []

    /// The server listens on `port`.
    func listening(on port: Int) { settle(.success(port)) }

    /// The server ended (before it listened: it could not).
    func ended(_ error: any Error) { settle(.failure(error)) }

    private func settle(_ r: Result<Int, any Error>) {
        let woken: [CheckedContinuation<Result<Int, any Error>, Never>] = lock.withLock {
            guard result == nil else { return [] }
            result = r
            lock.broadcast()
            defer { waiters.removeAll() }
            return waiters
        }
        for w in woken { w.resume(returning: r) }
    }

    /// The first result, blocking the thread up to `seconds`; nil when none came.
    func wait(seconds: UInt64) -> Result<Int, any Error>? {
        let deadline = MonotonicTime.nanos() + seconds * 1_000_000_000
        return lock.withLock {
            while result == nil && lock.wait(untilMonotonicNanos: deadline) {}
            return result
        }
    }

    /// The first result, awaited without blocking a thread.
    func value() async -> Result<Int, any Error> {
        await withCheckedContinuation { continuation in
            let ready: Result<Int, any Error>? = lock.withLock {
                if result == nil { waiters.append(continuation) }
                return result
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}
