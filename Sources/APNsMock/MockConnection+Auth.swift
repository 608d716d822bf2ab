#if canImport(Glibc)
import Glibc
#endif
import PushCore

/// Authentication and topics, as `RequestValidation` asks for them (apns.md, "Token
/// authentication" and "Certificate authentication").
extension MockConnection: RequestValidation.Policy {
    /// Notes the `authorization` header: either the verified token again, or one to check.
    func recordAuthorization(_ value: UnsafeRawBufferPointer, on stream: MockStream) {
        if !verifiedAuthorization.isEmpty, value.count == verifiedAuthorization.count,
           verifiedAuthorization.withUnsafeBytes({ memcmp($0.baseAddress!, value.baseAddress!, value.count) }) == 0 {
            stream.authorization = .sameAsVerified
        } else {
            stream.authorization = .pending
            stream.authorizationValue.removeAll(keepingCapacity: true)
            stream.authorizationValue.append(contentsOf: value)
        }
    }

    /// The token check: `.none` when the request may go on. Certificate connections were
    /// authenticated by the handshake; their topics are checked in `checkTopic`.
    func authorize(_ stream: MockStream) -> APNsReason {
        guard case .token = authentication else { return .none }
        if let until = core.faultState.faults.expireTokensUntil, MonotonicTime.nanos() < until {
            return .expiredProviderToken
        }
        let now = core.clock.wallSeconds()
        switch stream.authorization {
        case .absent:
            return .missingProviderToken
        case .sameAsVerified:
            break
        case .pending:
            // An earlier stream may have verified this very token since these headers came.
            if stream.authorizationValue != verifiedAuthorization {
                return adopt(stream.authorizationValue, now: now)
            }
        }
        // A cached token still ages: an hour after its iat it is expired, cached or not.
        return now - verifiedIssuedAt > core.verifier.maxAgeSeconds ? .expiredProviderToken : .none
    }

    /// Verifies a token new to this connection and makes it the connection's token.
    ///
    /// A connection belongs to the team of its first token (another team's token, however
    /// genuine, is InvalidProviderToken, as in pushy's mock), and may change its token at most
    /// once per `minTokenUpdateIntervalSeconds` (TooManyProviderTokenUpdates). A token with
    /// the key id and iat of the current one is the same token signed again, not an update.
    private func adopt(_ value: [UInt8], now: Int64) -> APNsReason {
        let result = value.withUnsafeBytes { core.verifier.verify(authorization: $0, now: now) }
        guard case .verified(let issuedAt, let keyID, let teamID) = result else {
            if case .rejected(let reason) = result { return reason }
            return .invalidProviderToken
        }
        if let boundTeam, boundTeam != teamID { return .invalidProviderToken }
        let isUpdate = boundTeam != nil && (keyID != verifiedKeyID || issuedAt != verifiedIssuedAt)
        if isUpdate {
            if now - lastTokenChange < core.minTokenUpdateIntervalSeconds { return .tooManyProviderTokenUpdates }
            lastTokenChange = now
        } else if boundTeam == nil {
            boundTeam = teamID
            lastTokenChange = now
        }
        verifiedAuthorization = value
        verifiedIssuedAt = issuedAt
        verifiedKeyID = keyID
        return .none
    }

    /// TopicDisallowed unless the connection may push to the topic (or its app's base topic):
    /// a certificate's topics, or the configured allow list for token connections.
    func checkTopic(_ topic: UnsafeRawBufferPointer, base: UnsafeRawBufferPointer) -> APNsReason {
        let allowed: Set<String>
        switch authentication {
        case .certificate(let topics, _): allowed = topics
        case .token, .none: allowed = core.allowedTopics
        }
        guard !allowed.isEmpty else { return .none }
        if allowed.contains(String(decoding: base, as: UTF8.self)) { return .none }
        return allowed.contains(String(decoding: topic, as: UTF8.self)) ? .none : .topicDisallowed
    }

    /// DeviceTokenNotForTopic when the token is registered for another topic.
    func checkTokenTopic(_ token: UnsafeRawBufferPointer, _ baseTopic: UnsafeRawBufferPointer) -> APNsReason {
        guard !core.deviceTokenTopics.isEmpty,
              let registered = core.deviceTokenTopics[String(decoding: token, as: UTF8.self).lowercased()] else {
            return .none
        }
        return registered.utf8.elementsEqual(baseTopic) ? .none : .deviceTokenNotForTopic
    }

    /// A certificate connection's request without `apns-topic` takes the certificate's
    /// default topic (its subject), as APNs does.
    func applyDefaultTopic(to stream: MockStream) {
        guard case .certificate(_, let defaultTopic) = authentication, let defaultTopic,
              stream.seenHeaders & RequestHeader.topic.bit == 0 else { return }
        stream.setTopic(Array(defaultTopic.utf8))
    }
}
