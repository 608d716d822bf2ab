#if canImport(Glibc)
import Glibc
#endif

/// One resolved address (`SocketConnect.Address`): what the resolver answers and a connect
/// starts from. A value here, under the transport, so that the client's machine can hold the
/// addresses left to try without depending on the transport.
public struct SocketAddress: Sendable {
    package var storage: sockaddr_storage
    package var length: socklen_t
    /// The address family (AF_INET or AF_INET6).
    public var family: Int32 { Int32(storage.ss_family) }

    /// An address of `length` bytes in `storage`.
    package init(storage: sockaddr_storage, length: socklen_t) {
        self.storage = storage
        self.length = length
    }
}
