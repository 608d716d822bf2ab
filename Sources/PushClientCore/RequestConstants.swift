import PushClientMachine
import PushCore

/// What every request of the client's life uses unchanged, set once by `init` (read by any
/// thread: the send path copies the default topic and starts the deadline).
struct RequestConstants {
    /// `:authority` bytes, stable for the client's life (nghttp2 references them unchanged).
    let authority: UnsafeRawBufferPointer
    /// The default topic's bytes, stable for the client's life.
    let defaultTopic: UnsafeRawBufferPointer
    /// How long a notification may take, from its send.
    let deadlineNanos: UInt64
    /// What becomes of error answers (pure; from maxAttempts and retryDelayMillis).
    let retryPolicy: RetryPolicy

    /// Frees the byte buffers (the client's deinit).
    func deallocate() {
        authority.deallocate()
        UnsafeMutableRawPointer(mutating: defaultTopic.baseAddress!).deallocate()
    }
}
