
/// The results of a batch (`APNsClient.send(contentsOf:)`), as they come: one `BatchResult`
/// per notification, in the order their outcomes arrive (not the batch's order: `index` says
/// which it is), then the end. Iterate it once; results that arrive before the iteration reaches
/// them wait in memory.
public struct PushBatchResults: AsyncSequence, Sendable {
    /// One notification's end.
    public typealias Element = BatchResult
    /// Iterating never fails: refusals are elements.
    public typealias Failure = Never

    let state: BatchState

    /// The iterator: `next()` suspends until the next result arrives; nil once every
    /// notification of the batch has had its element, or when the iterating task is cancelled.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let state: BatchState

        /// The next result, or nil at the end (or on cancellation).
        public mutating func next() async -> BatchResult? { await state.next() }
    }

    /// The iterator.
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(state: state) }

    /// How many notifications the batch holds (and so how many elements it yields).
    public var count: Int { state.count }
}

/// Where a batch's results wait for their reader: filled by the `ResultRouter` (on the
/// library's thread, or a sender's for refusals), read by `PushBatchResults`.
final class BatchState: Sendable {
    let count: Int

    private struct State {
        var waiting: [BatchResult] = []
        var head = 0
        var handedOut = 0
        var reader: UnsafeContinuation<BatchResult?, Never>?
        var cancelled = false

        /// Takes the first waiting result (there is one), compacting the storage now and then.
        mutating func take() -> BatchResult {
            let r = waiting[head]
            head += 1
            handedOut += 1
            if head == waiting.count {
                waiting.removeAll(keepingCapacity: true)
                head = 0
            } else if head >= 1024 && head * 2 >= waiting.count {
                waiting.removeFirst(head)
                head = 0
            }
            return r
        }
    }

    private let state = Locked(State())
    /// What the reader's cancellation also does (the router cancels the batch's notifications
    /// not yet written); set once, before the batch is handed out.
    private let onCancel = Locked<(@Sendable () -> Void)?>(nil)

    init(count: Int) { self.count = count }

    /// Sets what the reader's cancellation also does.
    func setCancelHandler(_ handler: @escaping @Sendable () -> Void) {
        onCancel.withLock { $0 = handler }
    }

    /// Adds results; hands one to a reader waiting for it.
    func deliver(_ results: some Sequence<BatchResult>) {
        let reader = state.withLock { s -> (UnsafeContinuation<BatchResult?, Never>, BatchResult)? in
            if s.cancelled { return nil }
            s.waiting.append(contentsOf: results)
            guard let reader = s.reader, s.head < s.waiting.count else { return nil }
            s.reader = nil
            return (reader, s.take())
        }
        reader.map { $0.0.resume(returning: $0.1) }
    }

    /// The next result, waiting for it; nil once all were handed out, or on cancellation.
    func next() async -> BatchResult? {
        await withTaskCancellationHandler {
            await withUnsafeContinuation { (c: UnsafeContinuation<BatchResult?, Never>) in
                let now = state.withLock { s -> BatchResult?? in
                    if s.head < s.waiting.count { return .some(s.take()) }
                    if s.handedOut == count || s.cancelled || Task.isCancelled { return .some(nil) }
                    s.reader = c
                    return nil
                }
                if let now { c.resume(returning: now) }
            }
        } onCancel: {
            let reader = state.withLock { s -> UnsafeContinuation<BatchResult?, Never>? in
                s.cancelled = true
                s.waiting = []
                s.head = 0
                defer { s.reader = nil }
                return s.reader
            }
            reader?.resume(returning: nil)
            onCancel.withLock { h -> (@Sendable () -> Void)? in
                defer { h = nil }
                return h
            }?()
        }
    }
}
