import PushCore

/// The authenticator of a server with neither token keys nor a client CA: every request is
/// authenticated; the topics are those of `Configuration.allowedTopics`.
final class OpenAuthenticator: MockAuthenticator {
    private let topics: TopicAllowList

    /// Allows `allowedTopics` (empty: any).
    init(allowedTopics: Set<String>) { topics = TopicAllowList(topics: allowedTopics) }

    func noteAuthorization(_ value: UnsafeRawBufferPointer, on request: MockStream) {
        request.authorization = .pending
    }

    func fillDefaults(_ request: MockStream) {}

    func authorize(_ request: MockStream) -> APNsReason { .none }

    func checkTopic(_ topic: UnsafeRawBufferPointer, base: UnsafeRawBufferPointer) -> APNsReason {
        topics.check(topic, base: base)
    }
}
