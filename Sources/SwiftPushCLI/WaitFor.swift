import Foundation

/// Runs `body` as a task and blocks the calling thread until it has finished: how a
/// synchronous command (the commands are not `AsyncParsableCommand`, see `main.swift`) calls
/// the async API. The body runs on the concurrency pool's threads, never on this one.
func waitFor<T: Sendable>(_ body: @escaping @Sendable () async -> T) -> T {
    let done = DispatchSemaphore(value: 0)
    let box = ResultBox<T>()
    Task {
        box.value = await body()
        done.signal()
    }
    done.wait()
    return box.value!
}

/// The task's result, handed to the waiting thread (the semaphore orders the write before the read).
private final class ResultBox<T>: @unchecked Sendable {
    var value: T?
}
