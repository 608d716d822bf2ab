import PushCore

/// The handlers that decide a connection's requests, in the order they are asked: the first
/// verdict other than `.pass` decides, and a request every handler passes is accepted. The
/// order is APNs's precedence of reasons (`MockFaults` describes it from the faults' side):
///
/// 1. `ServerFaultHandler`: a stall, a 500 or a 503 the server is scripted to give;
/// 2. `ValidationHandler`: the request's form and the connection's credentials (4xx, 403);
/// 3. `RegistrationHandler`: DeviceTokenNotForTopic, 410 for devices the server knows;
/// 4. `TokenFaultHandler`: the 410 and 429 scripted for particular devices.
///
/// Made per connection when TLS is up (the authenticator depends on the TLS session); the
/// handlers are values with typed fields, so asking them costs direct calls, no reference
/// counting. A new concern is a new `MockRequestHandler` and a line here.
struct MockRequestChain {
    let faults: ServerFaultHandler
    let validation: ValidationHandler
    let registrations: RegistrationHandler
    let tokenFaults: TokenFaultHandler

    /// The chain of a connection authenticated by `authenticator`, on a server with these
    /// settings and faults.
    init(authenticator: any MockAuthenticator, settings: MockSettings, faults: FaultState) {
        self.faults = ServerFaultHandler(faults: faults)
        validation = ValidationHandler(authenticator: authenticator, channels: settings.channels,
                                       lenientDeviceTokens: settings.lenientDeviceTokens)
        registrations = RegistrationHandler(settings: settings)
        tokenFaults = TokenFaultHandler(faults: faults)
    }

    /// The verdict on a complete request: `.answer` (`.none`: accepted) or `.stall`.
    func decide(_ request: MockStream, role: MockListener.Role) -> MockVerdict {
        var verdict = faults.handle(request, role: role)
        if verdict == .pass { verdict = validation.handle(request, role: role) }
        if verdict == .pass { verdict = registrations.handle(request, role: role) }
        if verdict == .pass { verdict = tokenFaults.handle(request, role: role) }
        return verdict == .pass ? .answer(.none) : verdict
    }
}
