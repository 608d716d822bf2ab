import PushCore

/// Who may send on a connection and to which topics: the part of a request's validation that
/// depends on the connection's credentials (apns.md, "Token authentication" and "Certificate
/// authentication"). One per connection, picked when TLS is up as Pushy's mock server picks its
/// handler per TLS session: `TokenAuthenticator` (provider tokens), `CertificateAuthenticator`
/// (a client certificate), `OpenAuthenticator` (neither configured: an accept-all server).
///
/// Validation (`RequestValidation`, `BroadcastValidation`) consults it where Apple's order of
/// reasons puts authentication: after the request's framing (method, path), before its fields;
/// and for TopicDisallowed among the fields. Class-bound: a connection holds its authenticator
/// in a `let` for its whole life, and calls it with no reference counting.
protocol MockAuthenticator: AnyObject {
    /// Notes a request's `authorization` header as it arrives (before the request is
    /// complete). Every authenticator marks the stream as having one (the record shows it).
    func noteAuthorization(_ value: UnsafeRawBufferPointer, on request: MockStream)
    /// Fills in what the credentials imply before a device notification is validated (a
    /// certificate's default topic).
    func fillDefaults(_ request: MockStream)
    /// The 403 check: `.none` when the request may go on.
    func authorize(_ request: MockStream) -> APNsReason
    /// TopicDisallowed unless the connection may push to `topic` or to `base` (the topic
    /// without its push type's suffix: the app's bundle id), else `.none`.
    func checkTopic(_ topic: UnsafeRawBufferPointer, base: UnsafeRawBufferPointer) -> APNsReason
}
