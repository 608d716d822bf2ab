/// The `authorization` header the client sends (token authentication): a buffer the client owns,
/// copied again only when the token is re-signed (`PushClient.currentAuthorization`), so
/// starting streams needs no closure and no array per batch. I/O thread only.
struct AuthorizationHeader {
    /// The current value (cleared when replaced and when the client goes).
    var buffer: UnsafeMutableRawBufferPointer?
    /// The token generation `buffer` belongs to.
    var generation = 0
}
