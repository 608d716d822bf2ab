import Foundation

/// Runs `body` on a thread of its own and awaits its result. The HTTP tests' clients block
/// (poll, read) while the server they talk to runs its handlers on Swift's cooperative pool:
/// blocking the pool's few threads (two here) with them could starve the server.
func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try body() }) }
        thread.start()
    }
}
