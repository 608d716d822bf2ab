#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import PushCore

extension PushPayload {
    /// Builds a payload from typed fields, so that callers never assemble JSON by hand: every
    /// `aps` key, the Live Activity keys, and custom keys beside `aps` (any `Encodable` value,
    /// or raw JSON). Values are checked by Apple's rules when the payload is made
    /// (`PushPayload(builder)`): ranges, the keys a Live Activity start needs, arguments without
    /// their format key; escaping is always right.
    ///
    /// ```swift
    /// var builder = PushPayload.Builder()
    /// builder.title = "Hello"
    /// builder.body = "from swiftpush"
    /// builder.badge = 1
    /// let payload = try PushPayload(builder)
    /// ```
    public struct Builder: Sendable, Equatable {
        /// The builder under the C ABI's `push_payload_*` too: one set of rules.
        var core = PayloadBuilder()

        /// `aps.interruption-level`: passive, active, time-sensitive, critical.
        public typealias InterruptionLevel = PayloadBuilder.InterruptionLevel
        /// `aps.event` of a Live Activity: start, update, end.
        public typealias LiveActivityEvent = PayloadBuilder.LiveActivityEvent
        /// `aps.sound`: `.named(file)`, or `.critical(name:volume:)` (plays even when the device
        /// is muted; volume 0...1; needs Apple's entitlement).
        public typealias Sound = PayloadBuilder.Sound

        /// An empty payload: `{"aps":{}}`.
        public init() {}


        /// `aps.alert.title`.
        public var title: String? {
            get { core.title }
            set { core.title = newValue }
        }

        /// `aps.alert.subtitle`.
        public var subtitle: String? {
            get { core.subtitle }
            set { core.subtitle = newValue }
        }

        /// `aps.alert.body`.
        public var body: String? {
            get { core.body }
            set { core.body = newValue }
        }

        /// `aps.alert.launch-image`.
        public var launchImage: String? {
            get { core.launchImage }
            set { core.launchImage = newValue }
        }

        /// `aps.alert.title-loc-key`.
        public var titleLocKey: String? {
            get { core.titleLocKey }
            set { core.titleLocKey = newValue }
        }

        /// `aps.alert.title-loc-args` (needs `titleLocKey`).
        public var titleLocArgs: [String] {
            get { core.titleLocArgs }
            set { core.titleLocArgs = newValue }
        }

        /// `aps.alert.subtitle-loc-key`.
        public var subtitleLocKey: String? {
            get { core.subtitleLocKey }
            set { core.subtitleLocKey = newValue }
        }

        /// `aps.alert.subtitle-loc-args` (needs `subtitleLocKey`).
        public var subtitleLocArgs: [String] {
            get { core.subtitleLocArgs }
            set { core.subtitleLocArgs = newValue }
        }

        /// `aps.alert.loc-key`.
        public var locKey: String? {
            get { core.locKey }
            set { core.locKey = newValue }
        }

        /// `aps.alert.loc-args` (needs `locKey`).
        public var locArgs: [String] {
            get { core.locArgs }
            set { core.locArgs = newValue }
        }

        /// `aps.badge`: 0 or more; 0 removes the badge.
        public var badge: Int? {
            get { core.badge }
            set { core.badge = newValue }
        }

        /// `aps.sound`: a sound file's name, or a critical alert sound.
        public var sound: Sound? {
            get { core.sound }
            set { core.sound = newValue }
        }

        /// `aps.thread-id`.
        public var threadID: String? {
            get { core.threadID }
            set { core.threadID = newValue }
        }

        /// `aps.category`.
        public var category: String? {
            get { core.category }
            set { core.category = newValue }
        }

        /// `aps.content-available: 1` (a background notification: push type background, priority 5).
        public var contentAvailable: Bool {
            get { core.contentAvailable }
            set { core.contentAvailable = newValue }
        }

        /// `aps.mutable-content: 1` (passes through the notification service extension).
        public var mutableContent: Bool {
            get { core.mutableContent }
            set { core.mutableContent = newValue }
        }

        /// `aps.target-content-id`.
        public var targetContentID: String? {
            get { core.targetContentID }
            set { core.targetContentID = newValue }
        }

        /// `aps.interruption-level`.
        public var interruptionLevel: InterruptionLevel? {
            get { core.interruptionLevel }
            set { core.interruptionLevel = newValue }
        }

        /// `aps.relevance-score`, 0...1.
        public var relevanceScore: Double? {
            get { core.relevanceScore }
            set { core.relevanceScore = newValue }
        }

        /// `aps.filter-criteria`.
        public var filterCriteria: String? {
            get { core.filterCriteria }
            set { core.filterCriteria = newValue }
        }

        /// `aps.timestamp` of a Live Activity update (UNIX seconds).
        public var timestamp: Int64? {
            get { core.timestamp }
            set { core.timestamp = newValue }
        }

        /// `aps.event` of a Live Activity: start, update or end.
        public var event: LiveActivityEvent? {
            get { core.event }
            set { core.event = newValue }
        }

        /// `aps.stale-date` of a Live Activity (UNIX seconds).
        public var staleDate: Int64? {
            get { core.staleDate }
            set { core.staleDate = newValue }
        }

        /// `aps.dismissal-date` of a Live Activity (UNIX seconds).
        public var dismissalDate: Int64? {
            get { core.dismissalDate }
            set { core.dismissalDate = newValue }
        }

        /// `aps.attributes-type` (a Live Activity start).
        public var attributesType: String? {
            get { core.attributesType }
            set { core.attributesType = newValue }
        }

        /// `aps.input-push-token: 1` (iOS 18, a Live Activity start): the new activity reports its own update push token.
        public var inputPushToken: Bool {
            get { core.inputPushToken }
            set { core.inputPushToken = newValue }
        }

        /// `aps.input-push-channel` (iOS 18, a Live Activity start): the channel id the new activity subscribes to.
        public var inputPushChannel: String? {
            get { core.inputPushChannel }
            set { core.inputPushChannel = newValue }
        }


        /// `aps.content-state` of a Live Activity: `value` encoded as a JSON object.
        public mutating func setContentState(_ value: some Encodable, encoder: JSONEncoder = JSONEncoder()) throws(PushError) {
            try setContentState(json: PushPayload.encode(value, with: encoder))
        }

        /// `aps.content-state` of a Live Activity from JSON bytes (one object); nil removes it.
        public mutating func setContentState(json: [UInt8]?) throws(PushError) {
            try set(.contentState, json: json)
        }

        /// `aps.attributes` of a Live Activity start: `value` encoded as a JSON object.
        public mutating func setAttributes(_ value: some Encodable, encoder: JSONEncoder = JSONEncoder()) throws(PushError) {
            try setAttributes(json: PushPayload.encode(value, with: encoder))
        }

        /// `aps.attributes` of a Live Activity start from JSON bytes (one object); nil removes it.
        public mutating func setAttributes(json: [UInt8]?) throws(PushError) {
            try set(.attributes, json: json)
        }

        /// Adds a top-level key beside `aps` with `value` encoded as JSON. Refuses `aps` and a
        /// key added before (`.badPayload`).
        public mutating func addCustom(_ key: String, _ value: some Encodable, encoder: JSONEncoder = JSONEncoder()) throws(PushError) {
            try addCustom(key, json: PushPayload.encode(value, with: encoder))
        }

        /// Adds a top-level key beside `aps` with a raw JSON value (checked as JSON).
        public mutating func addCustom(_ key: String, json: [UInt8]) throws(PushError) {
            do throws(PayloadBuilder.Failure) {
                try core.addCustom(key: key, json: json)
            } catch {
                throw PushError(error)
            }
        }

        /// Removes every custom key.
        public mutating func removeCustomKeys() { core.removeCustomKeys() }

        private mutating func set(_ field: PayloadBuilder.RawField, json: [UInt8]?) throws(PushError) {
            do throws(PayloadBuilder.Failure) {
                if let json {
                    try json.withBytes { (bytes) throws(PayloadBuilder.Failure) in try core.set(field, json: bytes) }
                } else {
                    try core.set(field, json: nil)
                }
            } catch {
                throw PushError(error)
            }
        }
    }
}
