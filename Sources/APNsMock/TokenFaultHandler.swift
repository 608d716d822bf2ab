/// The faults scripted for particular devices (`MockFaults.unregisteredTokens`: 410 with a
/// timestamp; `tooManyRequestsTokens`: 429), for device notifications that passed everything
/// else: the last handler of the chain.
struct TokenFaultHandler: MockRequestHandler {
    /// The server's faults.
    let faults: FaultState

    func handle(_ request: MockStream, role: MockListener.Role) -> MockVerdict {
        guard faults.affectsRequests, faults.namesTokens, request.path == .device else { return .pass }
        return faults.late(token: request.lowercasedToken)
    }
}
