/// Field-by-field setters over bytes: what the C ABI calls (`push_payload_set_*`). Each checks
/// its value as it is given (UTF-8, enumerated values, ranges), so a bad value is reported at
/// the call that gave it, not later at build, and leaves the builder unchanged.
extension PayloadBuilder {
    /// The string fields.
    public enum TextField: CaseIterable, Sendable {
        case title, subtitle, body, launchImage, titleLocKey, subtitleLocKey, locKey
        case sound, threadID, category, targetContentID, interruptionLevel, filterCriteria
        case event, attributesType, inputPushChannel

        /// The JSON key, for messages.
        public var key: String {
            switch self {
            case .title: return "title"
            case .subtitle: return "subtitle"
            case .body: return "body"
            case .launchImage: return "launch-image"
            case .titleLocKey: return "title-loc-key"
            case .subtitleLocKey: return "subtitle-loc-key"
            case .locKey: return "loc-key"
            case .sound: return "sound"
            case .threadID: return "thread-id"
            case .category: return "category"
            case .targetContentID: return "target-content-id"
            case .interruptionLevel: return "interruption-level"
            case .filterCriteria: return "filter-criteria"
            case .event: return "event"
            case .attributesType: return "attributes-type"
            case .inputPushChannel: return "input-push-channel"
            }
        }
    }

    /// The localization argument lists.
    public enum LocArgsField: CaseIterable, Sendable {
        case title, subtitle, body

        /// The JSON key, for messages.
        public var key: String {
            switch self {
            case .title: return "title-loc-args"
            case .subtitle: return "subtitle-loc-args"
            case .body: return "loc-args"
            }
        }
    }

    /// The integer fields.
    public enum IntegerField: CaseIterable, Sendable {
        case badge, contentAvailable, mutableContent, timestamp, staleDate, dismissalDate, inputPushToken

        /// The JSON key, for messages.
        public var key: String {
            switch self {
            case .badge: return "badge"
            case .contentAvailable: return "content-available"
            case .mutableContent: return "mutable-content"
            case .timestamp: return "timestamp"
            case .staleDate: return "stale-date"
            case .dismissalDate: return "dismissal-date"
            case .inputPushToken: return "input-push-token"
            }
        }
    }

    /// The fields holding a raw JSON object.
    public enum RawField: CaseIterable, Sendable {
        case contentState, attributes

        /// The JSON key, for messages.
        public var key: String { self == .contentState ? "content-state" : "attributes" }
    }

    /// Decodes `bytes` as UTF-8, refusing invalid sequences with a message naming `what`.
    public static func text(_ bytes: UnsafeRawBufferPointer, for what: String) throws(Failure) -> String {
        if let offset = PayloadJSONWriter.firstInvalidUTF8(bytes) {
            throw Failure(.badPayload, "\(what) is not valid UTF-8 (byte \(offset))")
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Sets a string field from UTF-8 bytes; nil removes it.
    public mutating func set(_ field: TextField, utf8 bytes: UnsafeRawBufferPointer?) throws(Failure) {
        guard let bytes else { return try set(field, nil) }
        try set(field, try Self.text(bytes, for: field.key))
    }

    /// Sets a string field; nil removes it. `interruptionLevel` and `event` take their enumerated
    /// values only; `sound` sets a named (not critical) sound.
    public mutating func set(_ field: TextField, _ value: String?) throws(Failure) {
        switch field {
        case .title: title = value
        case .subtitle: subtitle = value
        case .body: body = value
        case .launchImage: launchImage = value
        case .titleLocKey: titleLocKey = value
        case .subtitleLocKey: subtitleLocKey = value
        case .locKey: locKey = value
        case .sound: sound = value.map { .named($0) }
        case .threadID: threadID = value
        case .category: category = value
        case .targetContentID: targetContentID = value
        case .filterCriteria: filterCriteria = value
        case .attributesType: attributesType = value
        case .inputPushChannel:
            if let value { try Self.checkInputPushChannel(value) }
            inputPushChannel = value
        case .interruptionLevel:
            guard let value else { interruptionLevel = nil; return }
            guard let level = InterruptionLevel(rawValue: value) else {
                throw Failure(.badPayload, "interruption-level must be passive, active, time-sensitive or critical, got \"\(value)\"")
            }
            interruptionLevel = level
        case .event:
            guard let value else { event = nil; return }
            guard let e = LiveActivityEvent(rawValue: value) else {
                throw Failure(.badPayload, "event must be start, update or end, got \"\(value)\"")
            }
            event = e
        }
    }

    /// Appends one argument to a localization argument list.
    public mutating func appendLocArg(_ list: LocArgsField, utf8 bytes: UnsafeRawBufferPointer) throws(Failure) {
        appendLocArg(list, try Self.text(bytes, for: list.key))
    }

    /// Appends one argument to a localization argument list.
    public mutating func appendLocArg(_ list: LocArgsField, _ value: String) {
        switch list {
        case .title: titleLocArgs.append(value)
        case .subtitle: subtitleLocArgs.append(value)
        case .body: locArgs.append(value)
        }
    }

    /// Sets an integer field; nil removes it. `badge` and the dates must be 0 or more;
    /// `contentAvailable`, `mutableContent` and `inputPushToken` take 1 (present) or 0 (absent).
    public mutating func set(_ field: IntegerField, _ value: Int64?) throws(Failure) {
        if let value { try Self.checkNotNegative(field.key, value) }
        switch field {
        case .badge:
            guard let value else { badge = nil; return }
            guard value <= Int64(Int32.max) else { throw Failure(.badPayload, "badge \(value) is too large") }
            badge = Int(value)
        case .contentAvailable, .mutableContent, .inputPushToken:
            guard value == nil || value == 0 || value == 1 else {
                throw Failure(.badPayload, "\(field.key) must be 0 or 1, got \(value!)")
            }
            switch field {
            case .contentAvailable: contentAvailable = value == 1
            case .mutableContent: mutableContent = value == 1
            default: inputPushToken = value == 1
            }
        case .timestamp: timestamp = value
        case .staleDate: staleDate = value
        case .dismissalDate: dismissalDate = value
        }
    }

    /// Sets `relevance-score` (0...1); nil removes it.
    public mutating func setRelevanceScore(_ value: Double?) throws(Failure) {
        if let value { try Self.checkUnit("relevance-score", value) }
        relevanceScore = value
    }

    /// Sets a critical alert sound: `{"critical":1,"name":...,"volume":...}`, volume 0...1.
    public mutating func setCriticalSound(name: String, volume: Double) throws(Failure) {
        try Self.checkUnit("sound volume", volume)
        sound = .critical(name: name, volume: volume)
    }

    /// Sets `content-state` or `attributes` from JSON bytes, which must hold one JSON object;
    /// nil removes it.
    public mutating func set(_ field: RawField, json bytes: UnsafeRawBufferPointer?) throws(Failure) {
        var value: RawJSON?
        if let bytes {
            do throws(Failure) {
                value = try RawJSON(bytes)
            } catch {
                throw Failure(.badPayload, "\(field.key): \(error.message)")
            }
            if !value!.isObject { throw Failure(.badPayload, "\(field.key) must be a JSON object") }
        }
        if field == .contentState { contentState = value } else { attributes = value }
    }

    /// Adds a custom key given as UTF-8 bytes with a JSON value given as bytes.
    public mutating func addCustom(keyUTF8 key: UnsafeRawBufferPointer, json: UnsafeRawBufferPointer) throws(Failure) {
        try addCustom(key: try Self.text(key, for: "custom key"), json: json)
    }
}
