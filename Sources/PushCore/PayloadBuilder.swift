/// Builds a notification payload (the JSON body) from typed fields, so that callers never
/// assemble JSON by hand and get escaping, key names or Apple's value rules wrong.
///
/// Facts implemented here: `docs/apns.md`, "The payload" (the `aps` dictionary, the
/// alert dictionary, critical sounds, Live Activity keys; custom keys beside `aps`, never in it).
///
/// A value type: set the properties (or use the field setters, which check each value as it is
/// given and are what the C ABI calls), then `build`. Output is compact and deterministic: `aps`
/// first with its members in a fixed order, then the custom keys in the order they were added.
/// Raw JSON values (custom keys, `content-state`, `attributes`) are checked and copied byte for
/// byte, never re-encoded. A payload that is already JSON needs no builder at all: it is sent as
/// it is.
public struct PayloadBuilder: Sendable, Equatable {
    /// Why a payload could not be built or a value was refused: a C status
    /// (`.badPayload` or `.payloadTooLarge`) and a message naming the field.
    public typealias Failure = StatusError

    /// `aps.interruption-level`.
    public enum InterruptionLevel: String, CaseIterable, Sendable {
        case passive
        case active
        case timeSensitive = "time-sensitive"
        case critical
    }

    /// `aps.event` of a Live Activity update.
    public enum LiveActivityEvent: String, CaseIterable, Sendable {
        case start
        case update
        case end
    }

    /// `aps.sound`: a sound file name, or a critical alert sound (`{"critical":1,...}`), which
    /// plays even when the device is muted (needs Apple's entitlement).
    public enum Sound: Sendable, Equatable {
        case named(String)
        /// `volume` in 0...1.
        case critical(name: String, volume: Double)
    }

    /// A JSON value given as text, checked once and then copied as it is.
    public struct RawJSON: Sendable, Equatable {
        /// The value's bytes, surrounding whitespace removed.
        public let bytes: [UInt8]

        /// Checks that `bytes` hold exactly one JSON value in valid UTF-8.
        public init(_ bytes: some Collection<UInt8>) throws(Failure) {
            var b = Array(bytes)
            while let last = b.last, Self.isSpace(last) { b.removeLast() }
            let start = b.firstIndex { !Self.isSpace($0) } ?? b.count
            b.removeFirst(start)
            if b.isEmpty { throw Failure(.badPayload, "empty JSON value") }
            if let f = b.withUnsafeBytes({ JSON.validate($0) }) {
                throw Failure(.badPayload, "not valid JSON: \(f.message) at byte \(f.offset + start)")
            }
            self.bytes = b
        }

        /// Checks `text` as JSON.
        public init(_ text: String) throws(Failure) {
            try self.init(Array(text.utf8))
        }

        /// Whether the value is a JSON object.
        public var isObject: Bool { bytes.first == UInt8(ascii: "{") }

        private static func isSpace(_ c: UInt8) -> Bool { c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D }
    }

    /// A top-level key beside `aps` and its value.
    public struct CustomKey: Sendable, Equatable {
        public let key: String
        public let value: RawJSON
    }

    // MARK: aps.alert

    /// `aps.alert.title`
    public var title: String?
    /// `aps.alert.subtitle`
    public var subtitle: String?
    /// `aps.alert.body`
    public var body: String?
    /// `aps.alert.launch-image`
    public var launchImage: String?
    /// `aps.alert.title-loc-key`
    public var titleLocKey: String?
    /// `aps.alert.title-loc-args` (needs `titleLocKey`)
    public var titleLocArgs: [String] = []
    /// `aps.alert.subtitle-loc-key`
    public var subtitleLocKey: String?
    /// `aps.alert.subtitle-loc-args` (needs `subtitleLocKey`)
    public var subtitleLocArgs: [String] = []
    /// `aps.alert.loc-key`
    public var locKey: String?
    /// `aps.alert.loc-args` (needs `locKey`)
    public var locArgs: [String] = []

    // MARK: aps

    /// `aps.badge`: 0 or more; 0 removes the badge.
    public var badge: Int?
    /// `aps.sound`
    public var sound: Sound?
    /// `aps.thread-id`
    public var threadID: String?
    /// `aps.category`
    public var category: String?
    /// `aps.content-available: 1` (a background notification: push type background, priority 5).
    public var contentAvailable = false
    /// `aps.mutable-content: 1` (passes through the notification service extension).
    public var mutableContent = false
    /// `aps.target-content-id`
    public var targetContentID: String?
    /// `aps.interruption-level`
    public var interruptionLevel: InterruptionLevel?
    /// `aps.relevance-score`, 0...1.
    public var relevanceScore: Double?
    /// `aps.filter-criteria`
    public var filterCriteria: String?

    // MARK: aps, Live Activities (push type liveactivity)

    /// `aps.timestamp` (UNIX seconds)
    public var timestamp: Int64?
    /// `aps.event`
    public var event: LiveActivityEvent?
    /// `aps.content-state` (a JSON object)
    public var contentState: RawJSON?
    /// `aps.stale-date` (UNIX seconds)
    public var staleDate: Int64?
    /// `aps.dismissal-date` (UNIX seconds)
    public var dismissalDate: Int64?
    /// `aps.attributes-type` (with `event` start)
    public var attributesType: String?
    /// `aps.attributes` (a JSON object, with `event` start)
    public var attributes: RawJSON?
    /// `aps.input-push-token: 1` (iOS 18, with `event` start): the new Live Activity reports
    /// its own update push token.
    public var inputPushToken = false
    /// `aps.input-push-channel` (iOS 18, with `event` start): the channel id the new Live
    /// Activity subscribes to (broadcast push).
    public var inputPushChannel: String?

    // MARK: custom keys

    /// Keys beside `aps`, in the order they were added (see `addCustom`).
    public private(set) var customKeys: [CustomKey] = []

    /// An empty payload; `build` gives `{"aps":{}}`.
    public init() {}

    /// Adds a top-level key beside `aps` with a raw JSON value. Refuses `aps` (it is built from
    /// the fields) and a key added before.
    public mutating func addCustom(key: String, value: RawJSON) throws(Failure) {
        if key == "aps" { throw Failure(.badPayload, "custom key \"aps\" is not allowed: aps is built from the fields") }
        if customKeys.contains(where: { $0.key == key }) {
            throw Failure(.badPayload, "custom key \"\(key)\" is already set")
        }
        customKeys.append(CustomKey(key: key, value: value))
    }

    /// Adds a top-level key with a JSON value given as bytes (checked as JSON).
    public mutating func addCustom(key: String, json: some Collection<UInt8>) throws(Failure) {
        let value: RawJSON
        do throws(Failure) {
            value = try RawJSON(json)
        } catch {
            throw Failure(.badPayload, "custom key \"\(key)\": \(error.message)")
        }
        try addCustom(key: key, value: value)
    }

    /// Removes every custom key.
    public mutating func removeCustomKeys() { customKeys.removeAll() }

    // MARK: - Building

    /// Checks every field and returns the payload's JSON, refusing one longer than `limit`
    /// bytes (APNs: 4096, 5120 for voip).
    public func build(limit: Int = PushType.alert.payloadLimit) throws(Failure) -> [UInt8] {
        try build(limit: limit, limitHolder: "the limit is")
    }

    /// Checks every field and returns the payload's JSON, refusing one longer than the push
    /// type's limit.
    public func build(for pushType: PushType) throws(Failure) -> [UInt8] {
        try build(limit: pushType.payloadLimit, limitHolder: "push type \(pushType.headerValue) allows")
    }

    private func build(limit: Int, limitHolder: String) throws(Failure) -> [UInt8] {
        try check()
        var w = PayloadJSONWriter()
        w.beginObject()
        w.key("aps")
        w.beginObject()
        if hasAlert {
            w.key("alert")
            w.beginObject()
            if let title { w.key("title"); w.string(title) }
            if let subtitle { w.key("subtitle"); w.string(subtitle) }
            if let body { w.key("body"); w.string(body) }
            if let launchImage { w.key("launch-image"); w.string(launchImage) }
            if let titleLocKey { w.key("title-loc-key"); w.string(titleLocKey) }
            if !titleLocArgs.isEmpty { w.key("title-loc-args"); w.strings(titleLocArgs) }
            if let subtitleLocKey { w.key("subtitle-loc-key"); w.string(subtitleLocKey) }
            if !subtitleLocArgs.isEmpty { w.key("subtitle-loc-args"); w.strings(subtitleLocArgs) }
            if let locKey { w.key("loc-key"); w.string(locKey) }
            if !locArgs.isEmpty { w.key("loc-args"); w.strings(locArgs) }
            w.endObject()
        }
        if let badge { w.key("badge"); w.integer(Int64(badge)) }
        switch sound {
        case .named(let name)?:
            w.key("sound")
            w.string(name)
        case .critical(let name, let volume)?:
            w.key("sound")
            w.beginObject()
            w.key("critical"); w.integer(1)
            w.key("name"); w.string(name)
            w.key("volume"); w.double(volume)
            w.endObject()
        case nil:
            break
        }
        if let threadID { w.key("thread-id"); w.string(threadID) }
        if let category { w.key("category"); w.string(category) }
        if contentAvailable { w.key("content-available"); w.integer(1) }
        if mutableContent { w.key("mutable-content"); w.integer(1) }
        if let targetContentID { w.key("target-content-id"); w.string(targetContentID) }
        if let interruptionLevel { w.key("interruption-level"); w.string(interruptionLevel.rawValue) }
        if let relevanceScore { w.key("relevance-score"); w.double(relevanceScore) }
        if let filterCriteria { w.key("filter-criteria"); w.string(filterCriteria) }
        if let timestamp { w.key("timestamp"); w.integer(timestamp) }
        if let event { w.key("event"); w.string(event.rawValue) }
        if let contentState { w.key("content-state"); w.raw(contentState.bytes) }
        if let staleDate { w.key("stale-date"); w.integer(staleDate) }
        if let dismissalDate { w.key("dismissal-date"); w.integer(dismissalDate) }
        if let attributesType { w.key("attributes-type"); w.string(attributesType) }
        if let attributes { w.key("attributes"); w.raw(attributes.bytes) }
        if inputPushToken { w.key("input-push-token"); w.integer(1) }
        if let inputPushChannel { w.key("input-push-channel"); w.string(inputPushChannel) }
        w.endObject()
        for c in customKeys {
            w.key(c.key)
            w.raw(c.value.bytes)
        }
        w.endObject()
        // Raw values were checked alone, where they nest less deeply than here: one near
        // JSON.maxDepth would give a payload that every later check (push_client_send's too)
        // refuses (Tests/fuzz/corpus/payload/regression-deep-content-state).
        if let f = w.bytes.withUnsafeBytes({ JSON.validate($0) }) {
            throw Failure(.badPayload, "payload is not valid JSON: \(f.message) at byte \(f.offset) (content-state, attributes or a custom value nests too deeply)")
        }
        if w.bytes.count > limit {
            throw Failure(.payloadTooLarge, "payload is \(w.bytes.count) bytes; \(limitHolder) \(limit)")
        }
        return w.bytes
    }

    private var hasAlert: Bool {
        title != nil || subtitle != nil || body != nil || launchImage != nil || titleLocKey != nil
            || subtitleLocKey != nil || locKey != nil || !titleLocArgs.isEmpty || !subtitleLocArgs.isEmpty
            || !locArgs.isEmpty
    }

    /// Apple's value rules, for fields set directly as properties (the field setters check
    /// their value at once).
    private func check() throws(Failure) {
        if let badge { try Self.checkNotNegative("badge", Int64(badge)) }
        if case .critical(_, let volume)? = sound { try Self.checkUnit("sound volume", volume) }
        if let relevanceScore { try Self.checkUnit("relevance-score", relevanceScore) }
        if let timestamp { try Self.checkNotNegative("timestamp", timestamp) }
        if let staleDate { try Self.checkNotNegative("stale-date", staleDate) }
        if let dismissalDate { try Self.checkNotNegative("dismissal-date", dismissalDate) }
        if let contentState, !contentState.isObject { throw Failure(.badPayload, "content-state must be a JSON object") }
        if let attributes, !attributes.isObject { throw Failure(.badPayload, "attributes must be a JSON object") }
        // Arguments without their format key are ignored by the device: surely a mistake.
        if !titleLocArgs.isEmpty && titleLocKey == nil { throw Failure(.badPayload, "title-loc-args given without title-loc-key") }
        if !subtitleLocArgs.isEmpty && subtitleLocKey == nil {
            throw Failure(.badPayload, "subtitle-loc-args given without subtitle-loc-key")
        }
        if !locArgs.isEmpty && locKey == nil { throw Failure(.badPayload, "loc-args given without loc-key") }
        try checkLiveActivityStart()
    }

    /// Apple's rules for starting a Live Activity by push (ActivityKit, iOS 17.2 and 18): a
    /// start names its attributes type and carries its attributes and an alert (the device
    /// shows it); `input-push-token` and `input-push-channel` configure the activity being
    /// started, so they mean nothing on an update or an end.
    private func checkLiveActivityStart() throws(Failure) {
        if event == .start {
            if attributesType == nil { throw Failure(.badPayload, "a Live Activity start needs attributes-type") }
            if attributes == nil { throw Failure(.badPayload, "a Live Activity start needs attributes") }
            if !hasAlert { throw Failure(.badPayload, "a Live Activity start needs an alert (title or body)") }
        } else if inputPushToken || inputPushChannel != nil {
            let key = inputPushToken ? "input-push-token" : "input-push-channel"
            throw Failure(.badPayload, "\(key) belongs to a Live Activity start (event start) only")
        }
        // Checked again here: `inputPushChannel` is a public var, set without `set(_:_:)` too.
        if let inputPushChannel { try Self.checkInputPushChannel(inputPushChannel) }
    }

    /// `input-push-channel` must be a channel id (`BroadcastRules.checkChannelId`).
    static func checkInputPushChannel(_ id: String) throws(Failure) {
        var id = id
        if let v = id.withUTF8({ BroadcastRules.checkChannelId(UnsafeRawBufferPointer($0)) }) {
            throw Failure(.badPayload, "input-push-channel: \(v.message)")
        }
    }

    static func checkNotNegative(_ name: String, _ value: Int64) throws(Failure) {
        if value < 0 { throw Failure(.badPayload, "\(name) must be 0 or more, got \(value)") }
    }

    static func checkUnit(_ name: String, _ value: Double) throws(Failure) {
        // `contains` is false for NaN too.
        if !(0.0...1.0).contains(value) { throw Failure(.badPayload, "\(name) must be between 0 and 1, got \(value)") }
    }
}
