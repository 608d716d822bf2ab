#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import PushCore

/// A notification's JSON body: raw JSON bytes, any `Encodable` value, or what a
/// `PushPayload.Builder` builds (every `aps` key, the Live Activity keys, custom keys).
///
/// The bytes are shared, not copied, by every notification that carries the payload (a value
/// with copy-on-write storage): a multicast (one payload, many device tokens) holds one copy of
/// them until each notification's own copy into the client's slot. They are checked when sent
/// (one JSON object in UTF-8, within the push type's size limit), so a payload is never
/// validated twice.
public struct PushPayload: Sendable, Equatable {
    /// The JSON text.
    public let bytes: [UInt8]

    /// A payload of raw JSON bytes, sent as they are.
    public init(json bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// A payload of raw JSON text, sent as it is.
    public init(json text: String) {
        bytes = Array(text.utf8)
    }

    /// `value` encoded as JSON by `encoder` (a `JSONEncoder` with its defaults, unless given).
    /// Throws `.badPayload` naming the encoder's error.
    public init(encoding value: some Encodable, encoder: JSONEncoder = JSONEncoder()) throws(PushError) {
        bytes = try Self.encode(value, with: encoder)
    }

    /// What `builder` builds: checked field by field, refused when longer than the largest
    /// payload of any push type (the push type's own limit is checked when sent).
    /// Throws `.badPayload` or `.payloadTooLarge` naming the field.
    public init(_ builder: Builder) throws(PushError) {
        do throws(PayloadBuilder.Failure) {
            bytes = try builder.core.build(limit: PushType.allCases.map(\.payloadLimit).max()!)
        } catch {
            throw PushError(error)
        }
    }

    /// `value` as JSON bytes.
    static func encode(_ value: some Encodable, with encoder: JSONEncoder) throws(PushError) -> [UInt8] {
        do {
            return Array(try encoder.encode(value))
        } catch {
            throw PushError(.badPayload, "the payload could not be encoded as JSON: \(error)")
        }
    }
}
