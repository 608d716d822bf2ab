import PushCore

/// How a notification's apns-id is derived from what its entry says: the same on every
/// resend (docs/worker.md). Given to the machine (`EntryReader`) rather than computed in it: the
/// worker's names are SHA-1 UUIDs (`NameBasedUUID`), and SHA-1 is OpenSSL's, which the
/// machine's target may not reach (scripts/check-pure-targets.py). The id is PushCore's
/// `UUID128`, the Swift API's `APNsID`: the send path hands it to the client as it is.
public struct APNsIDNamer: Sendable {
    /// A single or batch notification's apns-id, from its id.
    let single: @Sendable (String) -> UUID128
    /// A multicast notification's, from its id and its device token's bytes.
    let multicast: @Sendable (String, ArraySlice<UInt8>) -> UUID128

    /// A namer of these two rules.
    public init(single: @escaping @Sendable (String) -> UUID128,
                multicast: @escaping @Sendable (String, ArraySlice<UInt8>) -> UUID128) {
        self.single = single
        self.multicast = multicast
    }
}
