import CNGHTTP2

/// An allocator for the connections' nghttp2 sessions in place of each connection's own pool
/// (CPushSystem's swiftpush_system.h), so that tests can make nghttp2 run out of memory at a
/// moment they choose (`ClientConfiguration.sessionMemory`). Chosen once per session, when it is created: the
/// allocation path itself is the same either way.
struct SessionMemory: @unchecked Sendable {
    /// nghttp2's allocator functions and their user data, which must outlive the client.
    let mem: nghttp2_mem
}
