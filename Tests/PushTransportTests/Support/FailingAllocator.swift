import CNGHTTP2
import Synchronization
#if canImport(Glibc)
import Glibc
#endif
@testable import PushClientCore

/// nghttp2's allocator for a client's sessions in a test (`ClientConfiguration.sessionMemory`):
/// the system's malloc, except that the next `failNext(_:)` allocations fail, so that nghttp2
/// runs out of memory at the moment the test chooses.
final class FailingAllocator: Sendable {
    private let failuresLeft = Atomic<Int>(0)
    private let refusedCount = Atomic<Int>(0)

    /// The allocations refused so far.
    var refused: Int { refusedCount.load(ordering: .acquiring) }

    /// Makes the next `count` allocations fail.
    func failNext(_ count: Int) { failuresLeft.store(count, ordering: .releasing) }

    /// For the configuration; `self` must outlive the client.
    var sessionMemory: SessionMemory {
        SessionMemory(mem: nghttp2_mem(
            mem_user_data: Unmanaged.passUnretained(self).toOpaque(),
            malloc: { size, user in FailingAllocator.from(user).refuses() ? nil : malloc(size) },
            free: { pointer, _ in free(pointer) },
            calloc: { count, size, user in FailingAllocator.from(user).refuses() ? nil : calloc(count, size) },
            realloc: { pointer, size, user in FailingAllocator.from(user).refuses() ? nil : realloc(pointer, size) }))
    }

    private static func from(_ user: UnsafeMutableRawPointer?) -> FailingAllocator {
        Unmanaged<FailingAllocator>.fromOpaque(user!).takeUnretainedValue()
    }

    /// Whether this allocation is one to refuse (counting it).
    private func refuses() -> Bool {
        while true {
            let left = failuresLeft.load(ordering: .acquiring)
            if left == 0 { return false }
            if failuresLeft.compareExchange(expected: left, desired: left - 1, ordering: .acquiringAndReleasing).exchanged {
                refusedCount.add(1, ordering: .releasing)
                return true
            }
        }
    }
}
