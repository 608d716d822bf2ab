#if canImport(Glibc)
import Glibc
#endif
import CSwiftPushABI
import PushCore

// The payload builder and the topic helper of the C ABI (declared in Include/swiftpush.h like
// the rest; see Exports.swift). The Swift core is PushCore.PayloadBuilder.

/// What a `push_payload_t` points to.
final class PayloadBox {
    /// The tag of its handles (`HandleRecord`).
    static let tag: UInt64 = 0x5350_5041_594C_4F44 // "SPPAYLOD"
    var builder = PayloadBuilder()
    /// The push type whose size limit `push_payload_build` enforces.
    var pushType = PushType.alert
    let lock = PThreadMutex()

    static func from(_ handle: push_payload_t?) -> PayloadBox? {
        HandleRecord.object(handle, tag: tag, as: PayloadBox.self)
    }

    /// Applies `change` to a copy of the builder and keeps it only if it succeeded, so a refused
    /// value leaves the payload as it was.
    func edit(_ err: UnsafeMutablePointer<push_error>?,
              _ change: (inout PayloadBuilder) throws(PayloadBuilder.Failure) -> Void) -> Int32 {
        lock.lock()
        defer { lock.unlock() }
        var copy = builder
        do throws(PayloadBuilder.Failure) {
            try change(&copy)
        } catch {
            return report(err, error.status, error.message)
        }
        builder = copy
        return succeed(err)
    }
}

/// A `PUSH_PAYLOAD_*` constant, by the setter that takes it.
private enum PayloadField {
    case text(PayloadBuilder.TextField)
    case locArgs(PayloadBuilder.LocArgsField)
    case integer(PayloadBuilder.IntegerField)
    case pushType
    case relevanceScore
    case raw(PayloadBuilder.RawField)

    init?(_ value: Int32) {
        switch UInt32(bitPattern: value) {
        case PUSH_PAYLOAD_ALERT_TITLE.rawValue: self = .text(.title)
        case PUSH_PAYLOAD_ALERT_SUBTITLE.rawValue: self = .text(.subtitle)
        case PUSH_PAYLOAD_ALERT_BODY.rawValue: self = .text(.body)
        case PUSH_PAYLOAD_ALERT_LAUNCH_IMAGE.rawValue: self = .text(.launchImage)
        case PUSH_PAYLOAD_ALERT_TITLE_LOC_KEY.rawValue: self = .text(.titleLocKey)
        case PUSH_PAYLOAD_ALERT_SUBTITLE_LOC_KEY.rawValue: self = .text(.subtitleLocKey)
        case PUSH_PAYLOAD_ALERT_LOC_KEY.rawValue: self = .text(.locKey)
        case PUSH_PAYLOAD_SOUND.rawValue: self = .text(.sound)
        case PUSH_PAYLOAD_THREAD_ID.rawValue: self = .text(.threadID)
        case PUSH_PAYLOAD_CATEGORY.rawValue: self = .text(.category)
        case PUSH_PAYLOAD_TARGET_CONTENT_ID.rawValue: self = .text(.targetContentID)
        case PUSH_PAYLOAD_INTERRUPTION_LEVEL.rawValue: self = .text(.interruptionLevel)
        case PUSH_PAYLOAD_FILTER_CRITERIA.rawValue: self = .text(.filterCriteria)
        case PUSH_PAYLOAD_EVENT.rawValue: self = .text(.event)
        case PUSH_PAYLOAD_ATTRIBUTES_TYPE.rawValue: self = .text(.attributesType)
        case PUSH_PAYLOAD_INPUT_PUSH_CHANNEL.rawValue: self = .text(.inputPushChannel)
        case PUSH_PAYLOAD_ALERT_TITLE_LOC_ARGS.rawValue: self = .locArgs(.title)
        case PUSH_PAYLOAD_ALERT_SUBTITLE_LOC_ARGS.rawValue: self = .locArgs(.subtitle)
        case PUSH_PAYLOAD_ALERT_LOC_ARGS.rawValue: self = .locArgs(.body)
        case PUSH_PAYLOAD_BADGE.rawValue: self = .integer(.badge)
        case PUSH_PAYLOAD_CONTENT_AVAILABLE.rawValue: self = .integer(.contentAvailable)
        case PUSH_PAYLOAD_MUTABLE_CONTENT.rawValue: self = .integer(.mutableContent)
        case PUSH_PAYLOAD_TIMESTAMP.rawValue: self = .integer(.timestamp)
        case PUSH_PAYLOAD_STALE_DATE.rawValue: self = .integer(.staleDate)
        case PUSH_PAYLOAD_DISMISSAL_DATE.rawValue: self = .integer(.dismissalDate)
        case PUSH_PAYLOAD_INPUT_PUSH_TOKEN.rawValue: self = .integer(.inputPushToken)
        case PUSH_PAYLOAD_PUSH_TYPE.rawValue: self = .pushType
        case PUSH_PAYLOAD_RELEVANCE_SCORE.rawValue: self = .relevanceScore
        case PUSH_PAYLOAD_CONTENT_STATE.rawValue: self = .raw(.contentState)
        case PUSH_PAYLOAD_ATTRIBUTES.rawValue: self = .raw(.attributes)
        default: return nil
        }
    }
}

/// The longest value a payload field may take: no payload of any push type is larger, so a
/// longer value could never be built. A larger length is refused before a byte is read (and a
/// NUL-terminated value is scanned no further).
private let maxValueBytes = PushType.allCases.map(\.payloadLimit).max()!

private func tooLong(_ err: UnsafeMutablePointer<push_error>?, _ what: String) -> Int32 {
    report(err, .payloadTooLarge, "\(what) is longer than \(maxValueBytes) bytes, the largest payload of any push type")
}

private let notAPayload = "payload is NULL or not a push_payload_t"

/// Writes `bytes` and a NUL into the caller's buffer, or says how big it must be.
func copyOut(_ bytes: [UInt8], _ out: UnsafeMutablePointer<CChar>?, _ capacity: Int,
                     _ outLength: UnsafeMutablePointer<Int>?, _ err: UnsafeMutablePointer<push_error>?) -> Int32 {
    outLength?.pointee = bytes.count
    guard let out else { return succeed(err) }
    guard capacity > bytes.count else {
        return report(err, .bufferTooSmall, "the output needs \(bytes.count + 1) bytes (NUL included); the buffer holds \(capacity)")
    }
    bytes.withUnsafeBytes { UnsafeMutableRawPointer(out).copyMemory(from: $0.baseAddress!, byteCount: bytes.count) }
    out[bytes.count] = 0
    return succeed(err)
}

// MARK: - Payload

/// Creates an empty payload (push_payload_build gives `{"aps":{}}`). Returns NULL only when
/// memory is exhausted. The caller owns it and releases it with push_payload_free. A payload
/// may be reused: build, change a field, build again.
@c public func push_payload_new() -> push_payload_t? {
    HandleRecord.make(PayloadBox(), tag: PayloadBox.tag)
}

/// Releases a payload. NULL is accepted and ignored. The handle is invalid afterwards.
@c public func push_payload_free(_ payload: push_payload_t?) {
    guard let payload, PayloadBox.from(payload) != nil else { return }
    HandleRecord.free(payload)
}

/// Sets a string field (PUSH_PAYLOAD_ALERT_TITLE ... PUSH_PAYLOAD_INPUT_PUSH_CHANNEL, see
/// enum push_payload_field) to `value`, `length` bytes of UTF-8 (0: NUL-terminated), copied.
/// A NULL `value` removes the field. Any UTF-8 text is accepted and escaped when built.
/// Errors: PUSH_E_INVALID_ARGUMENT (NULL or invalid payload handle, negative length, a field
/// that is not a string field), PUSH_E_BAD_PAYLOAD (invalid UTF-8; an interruption level other
/// than passive, active, time-sensitive, critical; an event other than start, update, end; an
/// input-push-channel that is not a base64 channel id),
/// PUSH_E_PAYLOAD_TOO_LARGE (a value longer than 5120 bytes, refused before it is read). A
/// refused value leaves the payload unchanged. `err` may be NULL. Thread-safe (calls on one
/// payload are serialized).
@c public func push_payload_set_string(_ payload: push_payload_t?, _ field: Int32,
                                       _ value: UnsafePointer<CChar>?, _ length: Int,
                                       _ err: UnsafeMutablePointer<push_error>?) -> Int32 {
    guard let box = PayloadBox.from(payload) else { return report(err, .invalidArgument, notAPayload) }
    guard length >= 0 else { return report(err, .invalidArgument, "length is negative") }
    guard case .text(let f)? = PayloadField(field) else {
        return report(err, .invalidArgument, "field \(field) is not a string field")
    }
    var bytes: UnsafeRawBufferPointer?
    if let value {
        guard let b = stringArgument(value, length, limit: maxValueBytes) else { return tooLong(err, "value") }
        bytes = b
    }
    return box.edit(err) { (b: inout PayloadBuilder) throws(PayloadBuilder.Failure) in try b.set(f, utf8: bytes) }
}

/// Appends one argument to a localization argument list: `list` is
/// PUSH_PAYLOAD_ALERT_TITLE_LOC_ARGS, PUSH_PAYLOAD_ALERT_SUBTITLE_LOC_ARGS or
/// PUSH_PAYLOAD_ALERT_LOC_ARGS; `value` is `length` bytes of UTF-8 (0: NUL-terminated), copied.
/// Each list needs its loc key (checked by push_payload_build); push_payload_clear empties it.
/// Errors: PUSH_E_INVALID_ARGUMENT (NULL or invalid payload, NULL value, negative length, not
/// a loc-args list), PUSH_E_BAD_PAYLOAD (invalid UTF-8), PUSH_E_PAYLOAD_TOO_LARGE (longer than
/// 5120 bytes). `err` may be NULL. Thread-safe.
@c public func push_payload_add_loc_arg(_ payload: push_payload_t?, _ list: Int32,
                                        _ value: UnsafePointer<CChar>?, _ length: Int,
                                        _ err: UnsafeMutablePointer<push_error>?) -> Int32 {
    guard let box = PayloadBox.from(payload) else { return report(err, .invalidArgument, notAPayload) }
    guard let value else { return report(err, .invalidArgument, "value is NULL") }
    guard length >= 0 else { return report(err, .invalidArgument, "length is negative") }
    guard case .locArgs(let f)? = PayloadField(list) else {
        return report(err, .invalidArgument, "field \(list) is not a loc-args list")
    }
    guard let bytes = stringArgument(value, length, limit: maxValueBytes) else { return tooLong(err, "value") }
    return box.edit(err) { (b: inout PayloadBuilder) throws(PayloadBuilder.Failure) in try b.appendLocArg(f, utf8: bytes) }
}

/// Sets an integer field: PUSH_PAYLOAD_BADGE (0 or more), PUSH_PAYLOAD_CONTENT_AVAILABLE,
/// PUSH_PAYLOAD_MUTABLE_CONTENT and PUSH_PAYLOAD_INPUT_PUSH_TOKEN (1, or 0 to leave the key
/// out), PUSH_PAYLOAD_TIMESTAMP,
/// PUSH_PAYLOAD_STALE_DATE, PUSH_PAYLOAD_DISMISSAL_DATE (UNIX seconds, 0 or more), or
/// PUSH_PAYLOAD_PUSH_TYPE (a PUSH_TYPE_*: the size limit push_payload_build enforces).
/// Errors: PUSH_E_INVALID_ARGUMENT (NULL or invalid payload, not an integer field),
/// PUSH_E_BAD_PAYLOAD (value out of range), PUSH_E_BAD_PUSH_TYPE (not a PUSH_TYPE_*).
/// `err` may be NULL. Thread-safe.
@c public func push_payload_set_int(_ payload: push_payload_t?, _ field: Int32, _ value: Int64,
                                    _ err: UnsafeMutablePointer<push_error>?) -> Int32 {
    guard let box = PayloadBox.from(payload) else { return report(err, .invalidArgument, notAPayload) }
    switch PayloadField(field) {
    case .integer(let f)?:
        return box.edit(err) { (b: inout PayloadBuilder) throws(PayloadBuilder.Failure) in try b.set(f, value) }
    case .pushType?:
        guard let type = Int32(exactly: value).flatMap({ PushType(rawValue: $0) }) else {
            return report(err, .badPushType, "push type \(value) is not a PUSH_TYPE_* value")
        }
        box.lock.withLock { box.pushType = type }
        return succeed(err)
    default:
        return report(err, .invalidArgument, "field \(field) is not an integer field")
    }
}

/// Sets a number field: PUSH_PAYLOAD_RELEVANCE_SCORE (0 to 1).
/// Errors: PUSH_E_INVALID_ARGUMENT (NULL or invalid payload, not a number field),
/// PUSH_E_BAD_PAYLOAD (out of range, or NaN). `err` may be NULL. Thread-safe.
@c public func push_payload_set_double(_ payload: push_payload_t?, _ field: Int32, _ value: Double,
                                       _ err: UnsafeMutablePointer<push_error>?) -> Int32 {
    guard let box = PayloadBox.from(payload) else { return report(err, .invalidArgument, notAPayload) }
    guard case .relevanceScore? = PayloadField(field) else {
        return report(err, .invalidArgument, "field \(field) is not a number field")
    }
    return box.edit(err) { (b: inout PayloadBuilder) throws(PayloadBuilder.Failure) in try b.setRelevanceScore(value) }
}

/// Sets aps.sound to a critical alert sound, `{"critical":1,"name":NAME,"volume":VOLUME}`, which
/// plays even when the device is muted (the app needs Apple's critical-alert entitlement).
/// `name` is `length` bytes of UTF-8 (0: NUL-terminated); `volume` is 0 to 1. Replaces a sound
/// set with PUSH_PAYLOAD_SOUND, and the other way round.
/// Errors: PUSH_E_INVALID_ARGUMENT (NULL or invalid payload, NULL name, negative length),
/// PUSH_E_BAD_PAYLOAD (invalid UTF-8, volume out of range), PUSH_E_PAYLOAD_TOO_LARGE (a name
/// longer than 5120 bytes). `err` may be NULL. Thread-safe.
@c public func push_payload_set_critical_sound(_ payload: push_payload_t?, _ name: UnsafePointer<CChar>?,
                                               _ length: Int, _ volume: Double,
                                               _ err: UnsafeMutablePointer<push_error>?) -> Int32 {
    guard let box = PayloadBox.from(payload) else { return report(err, .invalidArgument, notAPayload) }
    guard let name else { return report(err, .invalidArgument, "name is NULL") }
    guard length >= 0 else { return report(err, .invalidArgument, "length is negative") }
    guard let bytes = stringArgument(name, length, limit: maxValueBytes) else { return tooLong(err, "name") }
    return box.edit(err) { (b: inout PayloadBuilder) throws(PayloadBuilder.Failure) in
        try b.setCriticalSound(name: try PayloadBuilder.text(bytes, for: "sound name"), volume: volume)
    }
}

/// Sets PUSH_PAYLOAD_CONTENT_STATE or PUSH_PAYLOAD_ATTRIBUTES to a JSON object given as text
/// (`length` bytes, 0: NUL-terminated). It is checked (well-formed UTF-8 JSON, an object) and
/// copied into the payload as it is, never re-encoded. A NULL `json` removes the field.
/// Errors: PUSH_E_INVALID_ARGUMENT (NULL or invalid payload, negative length, not a raw
/// field), PUSH_E_BAD_PAYLOAD (not valid JSON, not an object: the message gives the byte
/// offset), PUSH_E_PAYLOAD_TOO_LARGE (longer than 5120 bytes). `err` may be NULL. Thread-safe.
@c public func push_payload_set_raw(_ payload: push_payload_t?, _ field: Int32,
                                    _ json: UnsafePointer<CChar>?, _ length: Int,
                                    _ err: UnsafeMutablePointer<push_error>?) -> Int32 {
    guard let box = PayloadBox.from(payload) else { return report(err, .invalidArgument, notAPayload) }
    guard length >= 0 else { return report(err, .invalidArgument, "length is negative") }
    guard case .raw(let f)? = PayloadField(field) else {
        return report(err, .invalidArgument, "field \(field) is not a raw JSON field")
    }
    var bytes: UnsafeRawBufferPointer?
    if let json {
        guard let b = stringArgument(json, length, limit: maxValueBytes) else { return tooLong(err, "json") }
        bytes = b
    }
    return box.edit(err) { (b: inout PayloadBuilder) throws(PayloadBuilder.Failure) in try b.set(f, json: bytes) }
}

/// Adds a custom top-level key beside `aps`: `key` (`key_length` bytes of UTF-8, 0:
/// NUL-terminated) with `json_value`, any JSON value as text (`value_length` bytes, 0:
/// NUL-terminated), checked and copied as it is. Custom keys are built after `aps`, in the
/// order they were added.
/// Errors: PUSH_E_INVALID_ARGUMENT (NULL or invalid payload, NULL key or value, negative
/// length), PUSH_E_BAD_PAYLOAD (key `aps`, a key added before, invalid UTF-8, a value that is
/// not valid JSON), PUSH_E_PAYLOAD_TOO_LARGE (key or value longer than 5120 bytes). `err` may
/// be NULL. Thread-safe.
@c public func push_payload_set_custom(_ payload: push_payload_t?, _ key: UnsafePointer<CChar>?, _ key_length: Int,
                                       _ json_value: UnsafePointer<CChar>?, _ value_length: Int,
                                       _ err: UnsafeMutablePointer<push_error>?) -> Int32 {
    guard let box = PayloadBox.from(payload) else { return report(err, .invalidArgument, notAPayload) }
    guard let key else { return report(err, .invalidArgument, "key is NULL") }
    guard let json_value else { return report(err, .invalidArgument, "json_value is NULL") }
    guard key_length >= 0, value_length >= 0 else { return report(err, .invalidArgument, "length is negative") }
    guard let k = stringArgument(key, key_length, limit: maxValueBytes) else { return tooLong(err, "key") }
    guard let v = stringArgument(json_value, value_length, limit: maxValueBytes) else { return tooLong(err, "json_value") }
    return box.edit(err) { (b: inout PayloadBuilder) throws(PayloadBuilder.Failure) in try b.addCustom(keyUTF8: k, json: v) }
}

/// Removes a field (any PUSH_PAYLOAD_* constant: a loc-args list is emptied, PUSH_PAYLOAD_SOUND
/// removes a critical sound too, PUSH_PAYLOAD_PUSH_TYPE goes back to PUSH_TYPE_ALERT).
/// Errors: PUSH_E_INVALID_ARGUMENT (NULL or invalid payload, unknown field). `err` may be NULL.
/// Thread-safe.
@c public func push_payload_clear(_ payload: push_payload_t?, _ field: Int32,
                                  _ err: UnsafeMutablePointer<push_error>?) -> Int32 {
    guard let box = PayloadBox.from(payload) else { return report(err, .invalidArgument, notAPayload) }
    guard let f = PayloadField(field) else { return report(err, .invalidArgument, "field \(field) is not a payload field") }
    if case .pushType = f {
        box.lock.withLock { box.pushType = .alert }
        return succeed(err)
    }
    return box.edit(err) { (b: inout PayloadBuilder) throws(PayloadBuilder.Failure) in
        switch f {
        case .text(let t): try b.set(t, nil)
        case .locArgs(.title): b.titleLocArgs = []
        case .locArgs(.subtitle): b.subtitleLocArgs = []
        case .locArgs(.body): b.locArgs = []
        case .integer(let i): try b.set(i, nil)
        case .relevanceScore: b.relevanceScore = nil
        case .raw(let r): try b.set(r, json: nil)
        case .pushType: break
        }
    }
}

/// Builds the payload's JSON: compact, `aps` first (its keys in a fixed order), then the custom
/// keys in the order added; text escaped as JSON requires (quotes, backslashes, control
/// characters, U+2028/U+2029), everything else UTF-8 as given. Writes it NUL-terminated into
/// `buffer` (`capacity` bytes; it needs *out_length + 1) and its length without the NUL into
/// `*out_length`. With `buffer` NULL, only `*out_length` is set: the way to ask for the size.
/// The payload is not changed and may be built again.
/// Errors: PUSH_E_INVALID_ARGUMENT (NULL or invalid payload, NULL out_length, negative
/// capacity), PUSH_E_BAD_PAYLOAD (a loc-args list without its loc key; a Live Activity start
/// (event start) without attributes-type, attributes or an alert; input-push-token or
/// input-push-channel on anything but a start; raw JSON values
/// (content-state, attributes, custom keys) that make the payload nest more than 64 levels
/// deep, the most push_client_send accepts), PUSH_E_PAYLOAD_TOO_LARGE (over the push type's
/// limit, PUSH_PAYLOAD_PUSH_TYPE; *out_length still receives the size),
/// PUSH_E_BUFFER_TOO_SMALL (`capacity` < *out_length + 1; *out_length receives the length,
/// nothing is written). `err` may be NULL. Thread-safe.
@c public func push_payload_build(_ payload: push_payload_t?, _ buffer: UnsafeMutablePointer<CChar>?, _ capacity: Int,
                                  _ out_length: UnsafeMutablePointer<Int>?,
                                  _ err: UnsafeMutablePointer<push_error>?) -> Int32 {
    out_length?.pointee = 0
    guard let box = PayloadBox.from(payload) else { return report(err, .invalidArgument, notAPayload) }
    guard let out_length else { return report(err, .invalidArgument, "out_length is NULL") }
    guard capacity >= 0 else { return report(err, .invalidArgument, "capacity is negative") }
    let (builder, pushType) = box.lock.withLock { (box.builder, box.pushType) }
    do throws(PayloadBuilder.Failure) {
        return copyOut(try builder.build(for: pushType), buffer, capacity, out_length, err)
    } catch {
        if error.status == .payloadTooLarge, let size = try? builder.build(limit: .max).count { out_length.pointee = size }
        return report(err, error.status, error.message)
    }
}

// MARK: - Topic

/// Derives the apns-topic for an app's bundle id and a push type: the bundle id plus the push
/// type's suffix (voip `.voip`, complication `.complication`, fileprovider
/// `.pushkit.fileprovider`, liveactivity `.push-type.liveactivity`, location `.location-query`,
/// pushtotalk `.voip-ptt`, widgets `.push-type.widgets`, controls `.push-type.controls`; alert
/// and background: the bundle id itself). `bundle_id` is `length` bytes (0: NUL-terminated).
/// Writes the topic NUL-terminated into `buffer` (`capacity` bytes) and its length into
/// `*out_length`; with `buffer` NULL only the length is set.
/// Errors: PUSH_E_INVALID_ARGUMENT (NULL bundle_id or out_length, negative length or capacity),
/// PUSH_E_BAD_PUSH_TYPE (not a PUSH_TYPE_*), PUSH_E_BAD_TOPIC (PUSH_TYPE_MDM, whose topic comes
/// from the MDM certificate; an empty bundle id, one longer than 255 bytes, or one with spaces,
/// control or non-ASCII characters), PUSH_E_BUFFER_TOO_SMALL. `err` may be NULL. Thread-safe.
@c public func push_topic_for(_ bundle_id: UnsafePointer<CChar>?, _ length: Int, _ push_type: Int32,
                              _ buffer: UnsafeMutablePointer<CChar>?, _ capacity: Int,
                              _ out_length: UnsafeMutablePointer<Int>?,
                              _ err: UnsafeMutablePointer<push_error>?) -> Int32 {
    out_length?.pointee = 0
    guard let bundle_id else { return report(err, .invalidArgument, "bundle_id is NULL") }
    guard let out_length else { return report(err, .invalidArgument, "out_length is NULL") }
    guard length >= 0, capacity >= 0 else { return report(err, .invalidArgument, "length or capacity is negative") }
    guard let type = PushType(rawValue: push_type) else {
        return report(err, .badPushType, "push type \(push_type) is not a PUSH_TYPE_* value")
    }
    guard let bundle = stringArgument(bundle_id, length, limit: NotificationRules.maxTopicBytes) else {
        return report(err, .badTopic, "bundle id is longer than \(NotificationRules.maxTopicBytes) bytes")
    }
    switch type.topic(forBundleID: bundle) {
    case .success(let topic): return copyOut(Array(topic.utf8), buffer, capacity, out_length, err)
    case .failure(let v): return report(err, v.status, v.message)
    }
}
