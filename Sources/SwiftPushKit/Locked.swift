import PushCore

/// A value behind a pthread mutex (the library's `PThreadMutex`, as its hand-offs use),
/// reachable only inside `withLock`.
final class Locked<Value>: @unchecked Sendable {
    private let mutex = PThreadMutex()
    private var value: Value

    init(_ value: Value) { self.value = value }

    /// Runs `body` on the value with the mutex held.
    @inline(__always)
    func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        mutex.lock()
        defer { mutex.unlock() }
        return try body(&value)
    }
}
