import Synchronization
import PushCore

/// Where faults set from any thread wait for the I/O thread: the faults themselves under a
/// lock, and a generation number that the I/O thread compares with an atomic load for every
/// request (a plain load: no lock on the hot path). A new generation means "take the new
/// faults and restart your counters".
final class FaultMailbox: @unchecked Sendable {
    private let lock = PThreadMutex()
    private var faults: MockFaults
    private let generationCounter = Atomic<UInt64>(0)

    init(_ faults: MockFaults) { self.faults = faults }

    /// The generation now; changes whenever `set` is called.
    var generation: UInt64 { generationCounter.load(ordering: .acquiring) }

    /// Replaces the faults. The generation moves inside the lock so that `current()` always
    /// returns a matching pair.
    func set(_ newFaults: MockFaults) {
        lock.withLock {
            faults = newFaults
            generationCounter.add(1, ordering: .releasing)
        }
    }

    /// The faults and their generation.
    func current() -> (MockFaults, UInt64) {
        lock.withLock { (faults, generationCounter.load(ordering: .relaxed)) }
    }
}
