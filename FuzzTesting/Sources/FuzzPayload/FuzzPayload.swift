import Foundation // JSONSerialization: an independent parser for what the builder writes
import FuzzSupport
import PushCore

// The payload builder and its JSON escaping. The input is a program: each step calls one
// setter with fuzzed strings, numbers or JSON (or sets a property directly, skipping the
// setters' checks), then the payload is built. Properties:
// - a refused setter leaves the builder unchanged; an accepted one stores what it was given;
// - build either fails with .badPayload or .payloadTooLarge and a message (too large only when
//   the unlimited build is really longer than the limit), or gives at most `limit` bytes that
//   JSON.validate accepts, whose top-level members are `aps` then the custom keys in order, each
//   custom value byte for byte as given;
// - Foundation reads every string field back exactly as it was set (escaping round-trips),
//   unless a raw value given by the caller is already something Foundation refuses.

func fuzzPayload(_ bytes: UnsafeRawBufferPointer) {
    var input = FuzzInput(bytes)
    var builder = PayloadBuilder()
    var steps = 0
    while !input.isEmpty && steps < 48 {
        steps += 1
        step(&builder, &input)
    }
    checkBuild(builder, pushType: PushType(rawValue: Int32(input.choose(PushType.allCases.count))) ?? .alert)
}

private func text(_ b: [UInt8]) -> String { String(decoding: b, as: UTF8.self) }

/// `withUnsafeBytes` for bodies with a typed throw (it only rethrows `any Error`).
private func withRaw<R>(_ b: [UInt8], _ body: (UnsafeRawBufferPointer) throws(PayloadBuilder.Failure) -> R) throws(PayloadBuilder.Failure) -> R {
    try b.withUnsafeBytes { raw in Result { () throws(PayloadBuilder.Failure) in try body(raw) } }.get()
}

/// Runs `change` and checks that a refusal left the builder as it was.
private func attempt(_ builder: inout PayloadBuilder, _ what: String,
                     _ change: (inout PayloadBuilder) throws(PayloadBuilder.Failure) -> Void) -> Bool {
    let before = builder
    do throws(PayloadBuilder.Failure) {
        try change(&builder)
        return true
    } catch {
        // Also compared as text: a NaN set directly as a property is never == itself.
        fuzzRequire(builder == before || String(reflecting: builder) == String(reflecting: before), "\(what) was refused (\(error.message)) but changed the builder")
        fuzzRequire(error.status == .badPayload && !error.message.isEmpty, "\(what) refused with \(error.status) \(error.message)")
        return false
    }
}

private func step(_ b: inout PayloadBuilder, _ input: inout FuzzInput) {
    switch input.choose(12) {
    case 0, 1: // a text field, through the UTF-8 setter
        let field = input.pick(PayloadBuilder.TextField.allCases)
        let value = input.bytes()
        let remove = input.byte() == 0xFF
        let ok = attempt(&b, "set \(field.key)") { (b) throws(PayloadBuilder.Failure) in
            if remove { try b.set(field, utf8: nil) } else { try withRaw(value) { (v) throws(PayloadBuilder.Failure) in try b.set(field, utf8: v) } }
        }
        if ok && !remove && field != .sound { fuzzRequire(stringField(b, field) == text(value), "\(field.key) not stored as given") }
    case 2: // a localization argument
        let list = input.pick(PayloadBuilder.LocArgsField.allCases)
        let value = input.bytes()
        _ = attempt(&b, "append \(list.key)") { (b) throws(PayloadBuilder.Failure) in
            try withRaw(value) { (v) throws(PayloadBuilder.Failure) in try b.appendLocArg(list, utf8: v) }
        }
    case 3: // an integer field
        let field = input.pick(PayloadBuilder.IntegerField.allCases)
        let value: Int64? = input.byte() == 0xFF ? nil : input.int64()
        _ = attempt(&b, "set \(field.key) \(String(describing: value))") { (b) throws(PayloadBuilder.Failure) in try b.set(field, value) }
    case 4:
        let value = input.double()
        let ok = attempt(&b, "relevance-score \(value)") { (b) throws(PayloadBuilder.Failure) in try b.setRelevanceScore(value) }
        fuzzRequire(ok == (0...1).contains(value), "relevance-score \(value) accepted: \(ok)")
    case 5:
        let name = text(input.bytes())
        let volume = input.double()
        let ok = attempt(&b, "critical sound \(volume)") { (b) throws(PayloadBuilder.Failure) in try b.setCriticalSound(name: name, volume: volume) }
        fuzzRequire(ok == (0...1).contains(volume), "volume \(volume) accepted: \(ok)")
    case 6, 7: // content-state or attributes, as JSON text
        let field = input.pick(PayloadBuilder.RawField.allCases)
        let json = input.bytes()
        let ok = attempt(&b, "set \(field.key)") { (b) throws(PayloadBuilder.Failure) in
            try withRaw(json) { (j) throws(PayloadBuilder.Failure) in try b.set(field, json: j) }
        }
        if ok { fuzzRequire(json.withUnsafeBytes { JSON.validate($0) } == nil, "\(field.key) accepted invalid JSON \(show(json))") }
    case 8, 9: // a custom key
        let key = input.bytes(max: 300)
        let json = input.bytes()
        let count = b.customKeys.count
        let ok = attempt(&b, "custom key \(show(key))") { (b) throws(PayloadBuilder.Failure) in
            try withRaw(key) { (k) throws(PayloadBuilder.Failure) in
                try withRaw(json) { (j) throws(PayloadBuilder.Failure) in try b.addCustom(keyUTF8: k, json: j) }
            }
        }
        fuzzRequire(b.customKeys.count == count + (ok ? 1 : 0), "custom key count")
    case 10: // properties set directly: build must apply the rules the setters skip
        switch input.choose(6) {
        case 0: b.badge = Int(truncatingIfNeeded: input.int64())
        case 1: b.timestamp = input.int64()
        case 2: b.staleDate = input.int64()
        case 3: b.relevanceScore = input.double()
        case 4: b.sound = .critical(name: text(input.bytes()), volume: input.double())
        default: b.contentState = try? PayloadBuilder.RawJSON(input.bytes())
        }
    default: // clear things
        switch input.choose(4) {
        case 0: b.removeCustomKeys()
        case 1: b.titleLocArgs = []; b.subtitleLocArgs = []; b.locArgs = []
        case 2: b = PayloadBuilder()
        default: b.sound = nil
        }
    }
}

private func stringField(_ b: PayloadBuilder, _ field: PayloadBuilder.TextField) -> String? {
    switch field {
    case .title: return b.title
    case .subtitle: return b.subtitle
    case .body: return b.body
    case .launchImage: return b.launchImage
    case .titleLocKey: return b.titleLocKey
    case .subtitleLocKey: return b.subtitleLocKey
    case .locKey: return b.locKey
    case .sound: if case .named(let n)? = b.sound { return n } else { return nil }
    case .threadID: return b.threadID
    case .category: return b.category
    case .targetContentID: return b.targetContentID
    case .interruptionLevel: return b.interruptionLevel?.rawValue
    case .filterCriteria: return b.filterCriteria
    case .event: return b.event?.rawValue
    case .attributesType: return b.attributesType
    case .inputPushChannel: return b.inputPushChannel
    }
}

private func checkBuild(_ b: PayloadBuilder, pushType: PushType) {
    let limit = pushType.payloadLimit
    let out: [UInt8]
    do throws(PayloadBuilder.Failure) {
        out = try b.build(for: pushType)
    } catch {
        fuzzRequire(!error.message.isEmpty, "build failed without a message")
        let unlimited = Result { () throws(PayloadBuilder.Failure) in try b.build(limit: .max) }
        switch (error.status, unlimited) {
        case (.payloadTooLarge, .success(let all)):
            fuzzRequire(all.count > limit, "too large at \(all.count) bytes for a limit of \(limit)")
        case (.badPayload, .failure(let again)):
            fuzzRequire(again == error, "build failed differently without a limit: \(again.message) / \(error.message)")
        default:
            fuzzRequire(false, "build failed with \(error.status) \(error.message); without a limit: \(unlimited)")
        }
        return
    }
    fuzzRequire(out.count <= limit, "built \(out.count) bytes over the limit \(limit)")
    fuzzRequire(out.withUnsafeBytes { JSON.validate($0) } == nil,
                "built payload is not valid JSON (\(String(describing: out.withUnsafeBytes { JSON.validate($0) }))): \(show(out))")
    guard case .success(let members) = JSON.topLevelMembers(out) else { return fuzzRequire(false, "built payload is not an object") }
    fuzzRequire(members.map(\.key) == ["aps"] + b.customKeys.map(\.key), "top-level keys \(members.map(\.key))")
    for (m, c) in zip(members.dropFirst(), b.customKeys) {
        fuzzRequire(Array(out[m.value]) == c.value.bytes, "custom \(c.key.debugDescription) not copied byte for byte")
    }
    checkWithFoundation(b, out)
}

/// Foundation must read every string that was set exactly as it was set.
private func checkWithFoundation(_ b: PayloadBuilder, _ out: [UInt8]) {
    guard let root = (try? JSONSerialization.jsonObject(with: Data(out))) as? [String: Any] else {
        let raws = b.customKeys.map(\.value) + [b.contentState, b.attributes].compactMap { $0 }
        let blame = raws.contains { (try? JSONSerialization.jsonObject(with: Data($0.bytes), options: [.fragmentsAllowed])) == nil }
        return fuzzRequire(blame, "Foundation cannot read the built payload: \(show(out))")
    }
    let aps = root["aps"] as? [String: Any] ?? [:]
    let alert = aps["alert"] as? [String: Any] ?? [:]
    func same(_ value: Any?, _ expected: String?, _ name: String) {
        guard let expected else { return fuzzRequire(value == nil, "\(name) present but not set") }
        let got = value as? String
        fuzzRequire(got.map { Array($0.utf8) } == Array(expected.utf8),
                    "\(name): set \(expected.debugDescription), read back \(String(describing: got).debugDescription)")
    }
    same(alert["title"], b.title, "title")
    same(alert["subtitle"], b.subtitle, "subtitle")
    same(alert["body"], b.body, "body")
    same(alert["launch-image"], b.launchImage, "launch-image")
    same(alert["title-loc-key"], b.titleLocKey, "title-loc-key")
    same(alert["subtitle-loc-key"], b.subtitleLocKey, "subtitle-loc-key")
    same(alert["loc-key"], b.locKey, "loc-key")
    same(aps["thread-id"], b.threadID, "thread-id")
    same(aps["category"], b.category, "category")
    same(aps["target-content-id"], b.targetContentID, "target-content-id")
    same(aps["filter-criteria"], b.filterCriteria, "filter-criteria")
    same(aps["attributes-type"], b.attributesType, "attributes-type")
    switch b.sound {
    case .named(let name)?: same(aps["sound"], name, "sound")
    case .critical(let name, _)?: same((aps["sound"] as? [String: Any])?["name"], name, "critical sound name")
    case nil: fuzzRequire(aps["sound"] == nil, "sound present but not set")
    }
    for (key, args) in [("title-loc-args", b.titleLocArgs), ("subtitle-loc-args", b.subtitleLocArgs), ("loc-args", b.locArgs)] {
        let got = (alert[key] as? [Any])?.map { ($0 as? String).map { Array($0.utf8) } } ?? []
        fuzzRequire(got == args.map { Array($0.utf8) }, "\(key) read back differently")
    }
    for c in b.customKeys { fuzzRequire(root[c.key] != nil || c.key.utf8.contains(0), "custom key \(c.key.debugDescription) missing") }
}

@main enum FuzzPayloadMain { static func main() { FuzzMain.run(fuzzPayload) } }
