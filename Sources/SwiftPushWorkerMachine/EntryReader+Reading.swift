import PushCore

/// The fields every notification of an entry (or of a batch element) shares once checked.
struct SharedFields {
    var pushType = PushType.alert
    var topic: String?
    var priority: Int32 = 0
    var expiration: Int64?
    var collapseID: String?
    var payload: Range<Int>?
    var notAfter: Int64?

    /// The notification to `token` with these fields.
    func note(id: String, token: Range<Int>, apnsID: UUID128) -> WorkNote {
        WorkNote(id: id, token: token, payload: payload, topic: topic, collapseID: collapseID, pushType: pushType,
                 priority: priority, expiration: expiration, notAfter: notAfter, apnsID: apnsID)
    }
}

extension EntryReader {
    /// One entry being read: its storage (where escaped strings of a batch are decoded to), its
    /// entry-level fields, and the steps every kind shares.
    struct Reading {
        let entry: QueueEntry
        /// The entry's bytes, then decoded strings.
        var storage: [UInt8]
        /// The entry's own notification fields (a batch's defaults).
        let entryFields: NoteFieldValues
        /// `app` and `campaign` of the entry ("" when absent).
        let entryApp: String
        let entryCampaign: String

        init(entry: QueueEntry) {
            self.entry = entry
            storage = entry.bytes
            entryFields = NoteFieldValues(entry: entry)
            entryApp = entry.value("app").map { String(decoding: $0, as: UTF8.self) } ?? ""
            entryCampaign = entry.value("campaign").map { String(decoding: $0, as: UTF8.self) } ?? ""
        }

        /// A value's own bytes: a stream field's as they are, a JSON string's without its quotes
        /// (decoded into the storage when it holds an escape), any other JSON value as written.
        mutating func bytes(_ v: NoteFieldValues.Value) -> Range<Int> {
            guard v.quoted else { return v.range }
            guard v.escaped else { return (v.range.lowerBound + 1)..<(v.range.upperBound - 1) }
            let decoded = storage.withUnsafeBytes { JSON.decodeString(UnsafeRawBufferPointer(rebasing: $0[v.range])) } ?? ""
            let start = storage.count
            storage.append(contentsOf: decoded.utf8)
            return start..<storage.count
        }

        /// A value as text.
        mutating func text(_ v: NoteFieldValues.Value) -> String { String(decoding: storage[bytes(v)], as: UTF8.self) }

        /// Refuses a token that is not hex of an even length.
        func checkToken(_ token: Range<Int>) throws(EntryRejection) {
            if let v = storage.withUnsafeBytes({ NotificationRules.checkDeviceToken(UnsafeRawBufferPointer(rebasing: $0[token])) }) {
                throw EntryRejection(v)
            }
        }

        /// Checks the fields of `f` a notification has besides its id and token.
        mutating func shared(_ f: NoteFieldValues, policy: AppPolicy, app: String, checkPayload: Bool) throws(EntryRejection) -> SharedFields {
            var s = SharedFields()
            if let t = f[.pushType] {
                let name = text(t)
                guard let p = PushType(headerValue: name) else {
                    throw EntryRejection(.badPushType, "unknown push type '\(name)'; one of \(PushType.allCases.map { "\($0.headerValue)" }.joined(separator: ", "))")
                }
                s.pushType = p
            }
            var topicRange: Range<Int>?
            if let t = f[.topic] { topicRange = bytes(t) }
            let pushType = s.pushType
            let topicViolation: NotificationRules.Violation? = storage.withUnsafeBytes { all in
                if let topicRange { return NotificationRules.checkTopic(UnsafeRawBufferPointer(rebasing: all[topicRange]), pushType: pushType) }
                let first = policy.topicBytes.first ?? []
                return first.withUnsafeBytes { NotificationRules.checkTopic($0, pushType: pushType) }
            }
            if let topicViolation { throw EntryRejection(topicViolation) }
            if let topicRange {
                let topic = storage[topicRange]
                if !policy.topicBytes.isEmpty && !policy.topicBytes.contains(where: { $0.elementsEqual(topic) }) {
                    throw EntryRejection(.topicDisallowed, "topic '\(String(decoding: topic, as: UTF8.self))' is not among app '\(app)''s topics")
                }
                s.topic = String(decoding: topic, as: UTF8.self)
            }
            if let p = f[.priority] {
                let t = text(p)
                guard let n = Int32(t) else { throw EntryRejection(.badPriority, "priority must be 10, 5 or 1 (got '\(t)')") }
                s.priority = n
            }
            if case .failure(let v) = NotificationRules.resolvePriority(s.priority, pushType: s.pushType) { throw EntryRejection(v) }
            if let e = f[.expiration] {
                let t = text(e)
                guard let n = Int64(t) else {
                    throw EntryRejection(.badExpiration, "expiration must be 0 (try once) or UNIX seconds, got '\(t)'")
                }
                if let v = NotificationRules.checkExpiration(n) { throw EntryRejection(v) }
                s.expiration = n
            }
            if let c = f[.collapseID] {
                let r = bytes(c)
                if let v = storage.withUnsafeBytes({ NotificationRules.checkCollapseId(UnsafeRawBufferPointer(rebasing: $0[r])) }) {
                    throw EntryRejection(v)
                }
                s.collapseID = String(decoding: storage[r], as: UTF8.self)
            }
            guard let p = f[.payload] else { throw EntryRejection(.badPayload, "payload is missing (field 'payload')") }
            let payload = bytes(p)
            if checkPayload, let v = storage.withUnsafeBytes({ NotificationRules.checkPayload(UnsafeRawBufferPointer(rebasing: $0[payload]), pushType: pushType) }) {
                throw EntryRejection(v)
            }
            s.payload = payload
            if let n = f[.notAfter] {
                let t = text(n)
                guard let v = Int64(t), v >= 0 else { throw EntryRejection(.badField, "not_after must be UNIX seconds, got '\(t)'") }
                s.notAfter = v
            }
            return s
        }

        /// The entry's `origin` and `retries` (set by the worker on entries back from the delayed set).
        var origin: String? { entry.value("origin").map { String(decoding: $0, as: UTF8.self) } }
        var retries: Int { max(0, entry.value("retries").flatMap { Int(String(decoding: $0, as: UTF8.self)) } ?? 0) }

        /// A read entry of `kind` with `notes`.
        func entry(kind: EntryKind, id: String?, count: Int, repeats: Int, notes: [NoteSlot], sharedPayload: Range<Int>?,
                   claims: [(id: String, note: Int)]) -> WorkEntry {
            WorkEntry(raw: entry, kind: kind, app: entryApp, campaign: entryCampaign, origin: origin, retries: retries, id: id,
                      count: count, repeats: repeats, rejection: nil, notes: notes, storage: storage, sharedPayload: sharedPayload,
                      claims: claims)
        }

        /// A single entry: one notification, ready or refused (its id claimed whenever it has one).
        func single(id: String?, _ note: Result<WorkNote, EntryRejection>) -> WorkEntry {
            let slot: NoteSlot
            switch note {
            case .success(let n): slot = .ready(n)
            case .failure(let e):
                var token: Range<Int>?
                if let t = entryFields[.token] { token = t.range }
                slot = .rejected(e, id: id ?? "", token: token)
            }
            return entry(kind: .single, id: id, count: 1, repeats: 0, notes: [slot], sharedPayload: nil,
                         claims: id.map { [($0, 0)] } ?? [])
        }

        /// An entry whose every notification gets `rejection` (its id claimed whenever it has one).
        func entryRejected(kind: EntryKind, id: String?, count: Int, _ rejection: EntryRejection) -> WorkEntry {
            if kind == .single { return single(id: id, .failure(rejection)) }
            return WorkEntry(raw: entry, kind: kind, app: entryApp, campaign: entryCampaign, origin: origin, retries: retries,
                             id: id, count: count, repeats: 0, rejection: rejection, notes: [], storage: storage,
                             sharedPayload: nil, claims: id.map { [($0, 0)] } ?? [])
        }
    }
}
