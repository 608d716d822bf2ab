import PushCore
import SwiftPushStatus
#if canImport(Glibc)
import Glibc
#endif

/// Reads the fleet's status once per interval while someone is looking (a page's live events
/// open, or a `/status.json` within the last `demandMillis`), on a thread of its own: the
/// reader's Redis calls block, and must block neither the worker's loop nor the server's event
/// loop. Every client is handed the same snapshot; nobody looking, nothing is read.
public final class StatusFeed: @unchecked Sendable {
    /// Time between reads while watched.
    public let intervalMillis: Int
    /// How long a `/status.json` keeps the feed reading.
    public let demandMillis: Int
    private let lock = PThreadMutex()
    private var latest: StatusSnapshot?
    private var latestNanos: UInt64 = 0
    private var subscribers: [Int: AsyncStream<StatusSnapshot>.Continuation] = [:]
    private var nextSubscriber = 0
    private var demandUntilNanos: UInt64 = 0
    private var stopped = false
    /// Used on the feed's thread only.
    private let reader: StatusReader

    /// Starts the feed's thread over `reader` (which it owns from now on).
    public init(reader: StatusReader, intervalMillis: Int = 1000, demandMillis: Int = 10_000) {
        self.reader = reader
        self.intervalMillis = intervalMillis
        self.demandMillis = demandMillis
        var thread = pthread_t()
        let context = Unmanaged.passRetained(self).toOpaque()
        pthread_create(&thread, nil, { arg in
            Unmanaged<StatusFeed>.fromOpaque(arg!).takeRetainedValue().run()
            return nil
        }, context)
        pthread_detach(thread)
    }

    /// Ends the thread (after the read under way, if any) and every client's updates.
    public func stop() {
        let ended = lock.withLock {
            stopped = true
            lock.broadcast()
            defer { subscribers.removeAll() }
            return Array(subscribers.values)
        }
        for c in ended { c.finish() }
    }

    /// Every snapshot from now on, the newest first if it is recent; the feed reads as long as
    /// the stream is consumed.
    func updates() -> AsyncStream<StatusSnapshot> {
        AsyncStream(bufferingPolicy: .bufferingNewest(1)) { continuation in
            let id: Int? = lock.withLock {
                guard !stopped else { return nil }
                nextSubscriber += 1
                subscribers[nextSubscriber] = continuation
                if let latest, MonotonicTime.nanos() - latestNanos < UInt64(intervalMillis) * 1_000_000 { continuation.yield(latest) }
                lock.broadcast()
                return nextSubscriber
            }
            guard let id else { return continuation.finish() }
            continuation.onTermination = { [weak self] _ in
                guard let self else { return }
                self.lock.withLock { _ = self.subscribers.removeValue(forKey: id) }
            }
        }
    }

    /// A snapshot at most one interval old: the latest, or the next read's (waiting at most
    /// `waitMillis`; nil if none came by then).
    func current(waitMillis: Int = 5000) async -> StatusSnapshot? {
        lock.withLock {
            demandUntilNanos = MonotonicTime.nanos() + UInt64(demandMillis) * 1_000_000
            lock.broadcast()
        }
        return await withTaskGroup(of: StatusSnapshot?.self) { group in
            group.addTask {
                for await snapshot in self.updates() { return snapshot }
                return nil
            }
            group.addTask {
                try? await Task.sleep(for: .milliseconds(waitMillis))
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    private func run() {
        lock.lock()
        while true {
            while !stopped && subscribers.isEmpty && MonotonicTime.nanos() >= demandUntilNanos {
                _ = lock.wait(untilMonotonicNanos: nil)
            }
            if stopped { break }
            lock.unlock()
            let snapshot = reader.read()
            lock.lock()
            latest = snapshot
            latestNanos = MonotonicTime.nanos()
            let listeners = Array(subscribers.values)
            lock.unlock()
            for c in listeners { c.yield(snapshot) }
            lock.lock()
            let next = MonotonicTime.nanos() + UInt64(intervalMillis) * 1_000_000
            while !stopped && MonotonicTime.nanos() < next { _ = lock.wait(untilMonotonicNanos: next) }
        }
        lock.unlock()
    }
}
