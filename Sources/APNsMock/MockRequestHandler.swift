import PushCore

/// What a request handler makes of a complete request.
enum MockVerdict: Equatable {
    /// Nothing against it: the next handler decides (after the last one, it is accepted).
    case pass
    /// Answer with this reason (`.none`: success) and, for 410, this timestamp (ms; -1: none).
    case answer(APNsReason, timestamp: Int64)
    /// Never answer: the stream stays open (apns.md, "Lessons" 4).
    case stall

    /// Answer with `reason`, no timestamp.
    static func answer(_ reason: APNsReason) -> MockVerdict { .answer(reason, timestamp: -1) }
}

/// One concern of deciding a request, as Pushy's mock server splits them: the faults the
/// server is scripted to inject, APNs's validation (which consults the connection's
/// `MockAuthenticator`), the server's device registrations. `MockRequestChain` asks them in
/// order, and the first that does not pass decides.
///
/// A handler sees the request as its stream recorded it (`MockStream`: headers, payload size)
/// and returns a verdict; it does no I/O, so each is tested with a stream filled in memory
/// (Tests/APNsMockTests/RequestHandlerTests.swift). Handlers run on the I/O thread, once per
/// complete request.
protocol MockRequestHandler {
    /// The verdict on `request`, which arrived on a connection playing `role`.
    func handle(_ request: MockStream, role: MockListener.Role) -> MockVerdict
}
