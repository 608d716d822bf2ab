import PushCore

/// The topics a connection may push to (apns.md: TopicDisallowed): a client certificate's, or
/// the configured list for connections without one (`Configuration.allowedTopics`). Empty
/// allows any.
struct TopicAllowList {
    /// The topics allowed; empty: any.
    let topics: Set<String>

    /// TopicDisallowed unless `base` (the topic without its push type's suffix) or `topic`
    /// itself is allowed.
    func check(_ topic: UnsafeRawBufferPointer, base: UnsafeRawBufferPointer) -> APNsReason {
        guard !topics.isEmpty else { return .none }
        if topics.contains(String(decoding: base, as: UTF8.self)) { return .none }
        return topics.contains(String(decoding: topic, as: UTF8.self)) ? .none : .topicDisallowed
    }
}
