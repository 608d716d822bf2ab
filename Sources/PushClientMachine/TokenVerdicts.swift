import PushCore

/// What the machine asks of the provider token (`ProviderToken`, in PushCrypto, conforms in the
/// driver's target): a protocol here so that this target never links OpenSSL. Both calls take
/// the token's own lock and do no I/O.
package protocol TokenVerdicts: AnyObject, Sendable {
    /// A request carrying the token of `generation` was accepted.
    func accepted(generation: Int)
    /// APNs answered ExpiredProviderToken to a request carrying the token of `generation`.
    func expiredRejection(generation: Int) -> TokenExpiryVerdict
}
