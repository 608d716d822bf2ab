import PushCore
@testable import PushClientCore
@testable import PushClientMachine

/// A `ClientCore` in memory with a few slots and a clock the test moves: notifications are made
/// as a sender would leave them (`notification`), the core is fed events by hand, and what it
/// decided is read from the slots, its lists and the actions its events return. No sockets, no threads.
struct CoreHarness {
    static let ms: UInt64 = 1_000_000

    let slots: SlotTable
    var core: ClientCore
    /// The time events carry (monotonic ns).
    var now: UInt64 = 1_000 * CoreHarness.ms
    /// The next stream id of each connection (the harness plays nghttp2).
    var nextStreamID: [ConnectionID: Int32] = [:]
    /// Notifications the harness took out of the outbox (`publish`), in order.
    var published: [Int32] = []
    /// What the events reported returned (their `actions:` form) and the test has not read yet
    /// (`takeActions`): the buffer the harness lends the core, as `PushClient.actions` is.
    var actions: [ClientCore.Action] = []

    /// A core retrying answered notifications up to `maxAttempts` times, the first after
    /// `retryDelayMillis` (jitter drawn as `unit`: the delay is d/2 + unit·d/2).
    init(maxAttempts: Int = 3, retryDelayMillis: Int = 100, unit: Double = 0) {
        var configuration = ClientConfiguration()
        configuration.recovery.maxAttempts = maxAttempts
        configuration.recovery.retryDelayMillis = retryDelayMillis
        self.init(configuration: configuration, unit: unit)
    }

    /// A core with `configuration` (its pool, timing and recovery settings), `log` (by default no
    /// log callback), signing provider tokens if `tokenAuthentication` (the driver's part, asking
    /// the token, is the test's).
    /// `random`: the core's random source (by default every jitter draw is `unit`).
    init(configuration: ClientConfiguration, unit: Double = 0, random: CoreRandom? = nil, capacity: Int = 64,
         log: ClientLog = ClientLog(callback: nil), tokenAuthentication: Bool = false) {
        slots = SlotTable(capacity: capacity)
        let r = configuration.recovery
        core = ClientCore(configuration: ClientCore.Settings(configuration), slots: slots,
                          retryPolicy: RetryPolicy(maxAnsweredAttempts: r.maxAttempts, baseDelayMillis: r.retryDelayMillis),
                          backoff: ReconnectBackoff(firstDelayMillis: r.reconnectFirstDelayMillis, maxDelayMillis: r.reconnectMaxDelayMillis),
                          random: random ?? CoreRandom(fixedUnit: unit), tokenAuthentication: tokenAuthentication, log: log)
    }

    /// A notification as a sender hands it over, sent now, due in `deadlineMillis`; returns its slot.
    mutating func notification(deadlineMillis: UInt64 = 10_000) -> Int32 {
        let index = slots.create()
        precondition(index >= 0, "the harness's slots ran out")
        let slot = slots[index]
        _ = SlotTable.reserve(slot, bytes: SlotLayout.request + 128)
        slot.pointee.request = Slot.Request()
        slot.pointee.request.submitNanos = now
        slot.pointee.request.deadlineNanos = now + deadlineMillis * Self.ms
        slot.pointee.transmission = Slot.Transmission()
        slot.pointee.answer = Slot.Answer()
        return index
    }

    /// Moves the clock on.
    mutating func advance(millis: UInt64) { now += millis * Self.ms }

    /// The slot at `index`.
    func slot(_ index: Int32) -> UnsafeMutablePointer<Slot> { slots[index] }

    /// The slot indices of `list`, front to back.
    func contents(_ list: SlotList) -> [Int32] {
        var out: [Int32] = []
        var i = list.head
        while i >= 0 { out.append(i); i = slots[i].pointee.links.next }
        return out
    }

    /// The finished notifications not yet published, in order.
    var finished: [Int32] { contents(core.outbox.finished) }
    /// The queue, front to back.
    var pending: [Int32] { contents(core.queue.pending) }

    /// A finished notification's result as a reader sees it.
    func result(_ index: Int32) -> (outcome: Int32, status: Int32, reason: APNsReason?, text: String, attempts: UInt32) {
        let view = ResultView(slots[index])
        return (view.outcome, view.status, APNsReason(rawValue: view.reason),
                String(decoding: view.reasonText, as: UTF8.self), view.attempts)
    }
}
