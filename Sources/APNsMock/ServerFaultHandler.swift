/// The faults that come before a request is looked at (`MockFaults`): a stall (every Nth
/// request, or its device token listed), a 500 or a 503 (every Nth, then the random rates).
/// Counted server-wide (`FaultState`); every request takes them, broadcasts and channel
/// management included.
struct ServerFaultHandler: MockRequestHandler {
    /// The server's faults.
    let faults: FaultState

    func handle(_ request: MockStream, role: MockListener.Role) -> MockVerdict {
        guard faults.affectsRequests else { return .pass }
        return faults.early(token: faults.namesTokens ? request.lowercasedToken : nil)
    }
}
