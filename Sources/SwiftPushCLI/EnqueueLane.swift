import ArgumentParser
import SwiftPushWorker
import SwiftPushKeys

/// `swiftpush enqueue --lane`: which of a shard's two streams the entries go to (docs/worker.md,
/// "The fast lane").
enum EnqueueLane: String, ExpressibleByArgument, CaseIterable {
    /// `push:{s}:fast`: read first by every worker, with a share of max_in_flight of its own.
    case fast
    /// `push:{s}`: campaigns and everything else (the default).
    case bulk

    /// The stream of this lane among `keys`.
    func stream(of keys: StreamKeys) -> String {
        switch self {
        case .fast: keys.fastStream
        case .bulk: keys.stream
        }
    }
}
