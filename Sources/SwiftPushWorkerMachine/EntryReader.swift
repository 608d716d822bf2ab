import PushCore

/// Turns a stream entry into its notifications, each ready to send or refused with a reason.
/// Pure: the same entry and apps always give the same answer, so every rule has a unit test.
///
/// The entry format is versioned by its `v` field (absent means 1): version 1 is one
/// notification; version 2 is a multicast (`tokens`) or a batch (`notifications`). The fields
/// are listed in docs/worker.md; unknown fields are ignored so that producers may add their own.
/// Payloads of single and batch notifications are checked by the client when they are sent
/// (once); a multicast's shared payload is checked here, once for all its tokens.
public struct EntryReader: Sendable {
    /// The entry format versions this worker reads.
    public static let supportedVersions: Set<String> = ["1", "2"]
    /// The fields of a batch element the entry's defaults never fill (a bit per `NoteField`).
    static let ownFields: UInt32 = 1 << UInt32(NoteField.id.rawValue) | 1 << UInt32(NoteField.token.rawValue)
    /// Longest notification id accepted, in bytes (it becomes part of a Redis hash field).
    public static let maxIDBytes = 256

    /// The credential sets, by name.
    public let apps: [String: AppPolicy]
    /// How each notification's apns-id is derived from its id.
    let namer: APNsIDNamer

    /// A reader routing to `apps`, naming notifications by `namer`.
    public init(apps: [String: AppPolicy], namer: APNsIDNamer) {
        self.apps = apps
        self.namer = namer
    }

    /// The notifications of `entry`.
    public func read(_ entry: QueueEntry) -> WorkEntry {
        var r = Reading(entry: entry)
        if let v = entry.value("v"), !Self.supportedVersions.contains(String(decoding: v, as: UTF8.self)) {
            let text = String(decoding: v, as: UTF8.self)
            return r.single(id: Self.notificationID(of: entry),
                            .failure(EntryRejection(.unsupportedVersion, "entry format version '\(text)' is not one this worker reads (1, 2)")))
        }
        if entry.value("v").map({ $0.elementsEqual("2".utf8) }) == true {
            let hasTokens = entry.value("tokens") != nil || entry.value("tokens_bin") != nil
            let hasNotes = entry.value("notifications") != nil
            if hasTokens && !hasNotes { return multicast(&r) }
            if hasNotes && !hasTokens { return batch(&r) }
            let why = hasTokens ? "both 'tokens' and 'notifications'" : "neither 'tokens' (multicast) nor 'notifications' (batch)"
            return r.entryRejected(kind: .single, id: Self.notificationID(of: entry), count: 1,
                                   EntryRejection(.badField, "a version-2 entry holds \(why)"))
        }
        return single(&r)
    }

    // MARK: - The three kinds

    private func single(_ r: inout Reading) -> WorkEntry {
        let entry = r.entry
        let id = Self.notificationID(of: entry)
        let note: Result<WorkNote, EntryRejection>
        do throws(EntryRejection) {
            let checkedID = try Self.checkedID(entry)
            let fields = r.entryFields
            if let twice = fields.firstRepeated { throw EntryRejection(.badField, "field '\(twice.name)' appears more than once") }
            let (_, policy) = try app(named: r.entryApp)
            let shared = try r.shared(fields, policy: policy, app: r.entryApp, checkPayload: false)
            guard let token = fields[.token].map({ r.bytes($0) }) else {
                throw EntryRejection(.badDeviceToken, "device token is missing (field 'token')")
            }
            try r.checkToken(token)
            note = .success(shared.note(id: checkedID, token: token, apnsID: namer.single(checkedID)))
        } catch {
            note = .failure(error)
        }
        return r.single(id: id, note)
    }

    private func multicast(_ r: inout Reading) -> WorkEntry {
        let entry = r.entry
        let id = Self.notificationID(of: entry)
        // The text form (`tokens`) or the packed one (`tokens_bin`, unpacked to the same hex text).
        var list = TokenList(items: [], in: [])
        var unreadable: EntryRejection?
        // Unpacked tokens are lowercase hex of an even length under the library's bound by
        // construction: only an empty one can break the token rule.
        var hexByConstruction = false
        if let packed = entry.range(of: "tokens_bin") {
            switch PackedTokens.unpack(packed, storage: &r.storage) {
            case .success(let items):
                list = TokenList(items: items, in: r.storage)
                hexByConstruction = true
            case .failure(let cut):
                unreadable = EntryRejection(.badField, "'tokens_bin' ends inside a token (the one at byte \(cut.offset), after \(cut.complete) whole)")
            }
        } else {
            list = TokenList(entry.range(of: "tokens")!, in: entry.bytes)
        }
        let count = max(1, list.listed)
        do throws(EntryRejection) {
            let checkedID = try Self.checkedID(entry)
            let fields = r.entryFields
            if let twice = fields.firstRepeated { throw EntryRejection(.badField, "field '\(twice.name)' appears more than once") }
            if entry.count("tokens") + entry.count("tokens_bin") > 1 {
                throw EntryRejection(.badField, entry.count("tokens") == 1 ? "the entry holds both 'tokens' and 'tokens_bin'"
                                                                            : "field 'tokens' or 'tokens_bin' appears more than once")
            }
            if let unreadable { throw unreadable }
            if list.listed > EntryKind.maxNotifications {
                throw EntryRejection(.badField, "the entry lists \(list.listed) tokens; at most \(EntryKind.maxNotifications)")
            }
            if list.listed == 0 { throw EntryRejection(.badDeviceToken, "the entry lists no token (field 'tokens')") }
            let (_, policy) = try app(named: r.entryApp)
            let shared = try r.shared(fields, policy: policy, app: r.entryApp, checkPayload: true)
            var notes: [NoteSlot] = []
            notes.reserveCapacity(list.distinct.count)
            for token in list.distinct {
                do throws(EntryRejection) {
                    if !hexByConstruction || token.isEmpty { try r.checkToken(token) }
                    notes.append(.ready(shared.note(id: checkedID, token: token,
                                                    apnsID: namer.multicast(checkedID, r.storage[token]))))
                } catch {
                    notes.append(.rejected(error, id: checkedID, token: token))
                }
            }
            return r.entry(kind: .multicast, id: id, count: notes.count, repeats: list.listed - notes.count, notes: notes,
                           sharedPayload: shared.payload, claims: [(checkedID, 0)])
        } catch {
            return r.entryRejected(kind: .multicast, id: id, count: count, error)
        }
    }

    private func batch(_ r: inout Reading) -> WorkEntry {
        let entry = r.entry
        let field = entry.range(of: "notifications")!
        let scanned = entry.bytes.withUnsafeBytes { bytes in
            BatchScanner.scan(UnsafeRawBufferPointer(rebasing: bytes[field]), base: field.lowerBound, maxElements: EntryKind.maxNotifications)
        }
        let elements: BatchScanner.Elements
        switch scanned {
        case .failure(let f):
            return r.entryRejected(kind: .batch, id: nil, count: 1,
                                   EntryRejection(.badField, "'notifications' is not a JSON array of notification objects: \(f.message) at byte \(f.offset)"))
        case .success(let e) where e.count == 0:
            return r.entryRejected(kind: .batch, id: nil, count: 1, EntryRejection(.badField, "'notifications' holds no notification"))
        case .success(let e):
            elements = e
        }
        let defaults = r.entryFields
        // The entry-level refusals every element shares, decided once.
        var shared: EntryRejection?
        if entry.count("notifications") > 1 {
            shared = EntryRejection(.badField, "field 'notifications' appears more than once")
        } else if let twice = defaults.firstRepeated {
            shared = EntryRejection(.badField, "field '\(twice.name)' appears more than once")
        }
        var policy = AppPolicy(topics: [])
        if shared == nil {
            do throws(EntryRejection) { policy = try app(named: r.entryApp).1 } catch { shared = error }
        }
        var notes: [NoteSlot] = []
        notes.reserveCapacity(elements.count)
        var claims: [(id: String, note: Int)] = []
        claims.reserveCapacity(elements.count)
        var seen: [String: Int] = [:]
        seen.reserveCapacity(elements.count)
        for i in 0..<elements.count {
            var fields = NoteFieldValues()
            for m in elements.element(i) {
                if let f = m.field { fields.add(f, .init(range: m.value, quoted: m.isString, escaped: m.escaped)) }
            }
            // An element's id, read as a stream field's would be; claimed once per entry.
            let rawID = fields[.id].map { r.bytes($0) }
            let id = rawID.flatMap { Self.validID(r.storage[$0]) }
            let token = fields[.token].map { r.bytes($0) }
            func refuse(_ e: EntryRejection) { notes.append(.rejected(e, id: id ?? "", token: token)) }
            if let shared { refuse(shared); if let id, seen[id] == nil { seen[id] = i; claims.append((id, i)) }; continue }
            guard let id else {
                refuse(rawID == nil ? EntryRejection(.missingId, "notification \(i) of the batch has no 'id'")
                                    : EntryRejection(.badId, "the 'id' must be 1 to \(Self.maxIDBytes) bytes of UTF-8 without control characters"))
                continue
            }
            if let first = seen[id] {
                refuse(EntryRejection(.duplicateId, "id '\(id)' was already used by notification \(first) of the same entry"))
                continue
            }
            seen[id] = i
            claims.append((id, i))
            if let twice = fields.firstRepeated { refuse(EntryRejection(.badField, "field '\(twice.name)' appears more than once")); continue }
            if let own = fields[.app], !r.storage[r.bytes(own)].elementsEqual(r.entryApp.utf8) {
                refuse(EntryRejection(.badField, "'app' is an entry-level field of a batch: an element may only repeat the entry's"))
                continue
            }
            if let own = fields[.campaign], !r.storage[r.bytes(own)].elementsEqual(r.entryCampaign.utf8) {
                refuse(EntryRejection(.badField, "'campaign' is an entry-level field of a batch: an element may only repeat the entry's"))
                continue
            }
            fields.fill(from: defaults, except: Self.ownFields)
            do throws(EntryRejection) {
                let s = try r.shared(fields, policy: policy, app: r.entryApp, checkPayload: false)
                guard let token else { throw EntryRejection(.badDeviceToken, "device token is missing (member 'token')") }
                try r.checkToken(token)
                notes.append(.ready(s.note(id: id, token: token, apnsID: namer.single(id))))
            } catch {
                refuse(error)
            }
        }
        var made = r.entry(kind: .batch, id: nil, count: notes.count, repeats: 0, notes: notes, sharedPayload: nil, claims: claims)
        made.elements = elements.objects
        return made
    }

    // MARK: - Ids and apps

    /// The app named `name` and its policy, or UnknownApp.
    private func app(named name: String) throws(EntryRejection) -> (String, AppPolicy) {
        if name.isEmpty { throw EntryRejection(.unknownApp, "the entry names no app (field 'app')") }
        guard let policy = apps[name] else {
            throw EntryRejection(.unknownApp, "unknown app '\(name)': this worker serves \(apps.keys.sorted().joined(separator: ", "))")
        }
        return (name, policy)
    }

    /// The `id` field of a stream entry: present once, non-empty, bounded, valid UTF-8 without
    /// control characters (it appears in guards, logs and the outcome stream).
    public static func notificationID(of entry: QueueEntry) -> String? {
        guard entry.count("id") == 1, let raw = entry.value("id") else { return nil }
        return validID(raw)
    }

    /// `raw` as an id, if it is one.
    static func validID(_ raw: some Collection<UInt8>) -> String? {
        guard !raw.isEmpty, raw.count <= maxIDBytes, !raw.contains(where: { $0 < 0x20 || $0 == 0x7F }) else { return nil }
        let text = String(decoding: raw, as: UTF8.self)
        return text.utf8.elementsEqual(raw) ? text : nil
    }

    /// The entry's id, or the rejection that says why it has none.
    private static func checkedID(_ entry: QueueEntry) throws(EntryRejection) -> String {
        if let id = notificationID(of: entry) { return id }
        switch entry.count("id") {
        case 0: throw EntryRejection(.missingId, "the entry has no 'id' field")
        case 1: throw EntryRejection(.badId, "the 'id' must be 1 to \(maxIDBytes) bytes of UTF-8 without control characters")
        default: throw EntryRejection(.badId, "the entry has \(entry.count("id")) 'id' fields")
        }
    }
}
