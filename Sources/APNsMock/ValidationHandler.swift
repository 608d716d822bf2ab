import PushCore

/// APNs's rules for the request's form (apns.md, "Request" and "Broadcast push and channels"),
/// with the connection's authenticator consulted where Apple's order of reasons puts it (as
/// Pushy's validating handler calls its authentication hook):
///
/// - on the channel management host, a channel request (`BroadcastValidation.answer`), which
///   it also carries out on the registry; its answer (status, channel id, body) is written
///   into the stream;
/// - a broadcast (`BroadcastValidation.verdict`);
/// - anything else as a device notification (`RequestValidation.verdict`), after the
///   authenticator has filled in its defaults. A valid one passes, for the handlers after.
struct ValidationHandler: MockRequestHandler {
    /// The connection's credentials.
    let authenticator: any MockAuthenticator
    /// The broadcast channels.
    let channels: ChannelRegistry
    /// `Configuration.lenientDeviceTokens`: a device token's length is not checked.
    var lenientDeviceTokens = false

    func handle(_ request: MockStream, role: MockListener.Role) -> MockVerdict {
        if role == .channelManagement {
            let answer = BroadcastValidation.answer(management: request, authenticator: authenticator, registry: channels)
            MockResponse.fillManagementAnswer(request, answer)
            return .answer(answer.reason)
        }
        if request.path == .broadcast {
            return .answer(BroadcastValidation.verdict(forBroadcast: request, authenticator: authenticator, registry: channels))
        }
        authenticator.fillDefaults(request)
        let reason = RequestValidation.verdict(for: request, authenticator: authenticator,
                                               lenientDeviceTokens: lenientDeviceTokens)
        return reason == .none ? .pass : .answer(reason)
    }
}
