import PushCore

/// The authenticator of a connection whose client presented a certificate (verified by the
/// TLS handshake, so every request is authenticated): the certificate's topics are what it may
/// push to, and a request without `apns-topic` takes its default topic, as APNs does.
final class CertificateAuthenticator: MockAuthenticator {
    private let topics: TopicAllowList
    /// The certificate's default topic as bytes (nil: none).
    private let defaultTopic: [UInt8]?

    /// The authenticator of a certificate carrying `certificateTopics`.
    init(_ certificateTopics: CertificateTopics) {
        topics = TopicAllowList(topics: certificateTopics.allowed)
        defaultTopic = certificateTopics.defaultTopic.map { Array($0.utf8) }
    }

    func noteAuthorization(_ value: UnsafeRawBufferPointer, on request: MockStream) {
        request.authorization = .pending
    }

    /// A request without `apns-topic` takes the certificate's default topic (its subject).
    func fillDefaults(_ request: MockStream) {
        guard let defaultTopic, request.seenHeaders & RequestHeader.topic.bit == 0 else { return }
        request.setTopic(defaultTopic)
    }

    func authorize(_ request: MockStream) -> APNsReason { .none }

    func checkTopic(_ topic: UnsafeRawBufferPointer, base: UnsafeRawBufferPointer) -> APNsReason {
        topics.check(topic, base: base)
    }
}
