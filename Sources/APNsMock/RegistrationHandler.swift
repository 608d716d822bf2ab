import PushCore

/// What the server knows of devices (`MockServer.Configuration`): a token registered for
/// another app is DeviceTokenNotForTopic (`deviceTokenTopics`), a token no longer registered is
/// 410 Unregistered with the time it was (`unregisteredDeviceTokens`). Asked after validation,
/// so these come after every form check, as at APNs; device notifications only.
struct RegistrationHandler: MockRequestHandler {
    /// The server's settings (the two tables).
    let settings: MockSettings

    func handle(_ request: MockStream, role: MockListener.Role) -> MockVerdict {
        guard request.path == .device else { return .pass }
        if !settings.deviceTokenTopics.isEmpty, let registered = settings.deviceTokenTopics[request.lowercasedToken] {
            let base = RequestValidation.baseTopic(request.topicBytes, pushType: request.pushType ?? .alert)
            if !registered.utf8.elementsEqual(base) { return .answer(.deviceTokenNotForTopic) }
        }
        if !settings.unregisteredDeviceTokens.isEmpty, let t = settings.unregisteredDeviceTokens[request.lowercasedToken] {
            return .answer(.unregistered, timestamp: t)
        }
        return .pass
    }
}
