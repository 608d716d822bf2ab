import Foundation // JSONSerialization: an independent parser to compare against
import FuzzSupport
import PushCore

// JSON.validate, topLevelMembers, decodeString and decodeInt64 over arbitrary bytes. Besides not
// crashing, they must agree with each other and with Foundation's parser:
// - topLevelMembers succeeds exactly when validate accepts a document that is an object, and
//   fails with validate's failure otherwise; members are in order, inside the document, and
//   each value is a valid JSON value on its own;
// - string values decode (and to what Foundation decodes them to); decodeInt64 reads exactly
//   the integers Swift's Int64(String) reads; non-strings never decode as strings;
// - a UTF-8 document (no NUL, no byte order mark) that validate accepts, Foundation accepts
//   too, except unpaired surrogate escapes (RFC 8259 allows them, Foundation refuses them) and
//   numbers too large for a Double. (Not the other way round: Foundation is lenient, e.g. it
//   takes `[5,]`.)

func fuzzJSON(_ doc: UnsafeRawBufferPointer) {
    let failure = JSON.validate(doc)
    if let failure {
        fuzzRequire(!failure.message.isEmpty && (0...doc.count).contains(failure.offset),
                    "failure \(failure) out of range for \(doc.count) bytes")
    }
    let start = doc.firstIndex { !isSpace($0) }
    let isObject = start.map { doc[$0] == UInt8(ascii: "{") } ?? false

    switch JSON.topLevelMembers(doc) {
    case .success(let members):
        fuzzRequire(failure == nil && isObject, "topLevelMembers accepted what validate refused (\(String(describing: failure))): \(show(doc))")
        var previousEnd = 0
        for m in members {
            fuzzRequire(m.value.lowerBound >= previousEnd && m.value.upperBound <= doc.count && !m.value.isEmpty,
                        "member \(m.key.debugDescription) has range \(m.value) after \(previousEnd)")
            previousEnd = m.value.upperBound
            let raw = UnsafeRawBufferPointer(rebasing: doc[m.value])
            fuzzRequire(JSON.validate(raw) == nil, "member value is not valid JSON alone: \(show(raw))")
            checkScalar(raw)
        }
    case .failure(let f):
        if isObject {
            fuzzRequire(failure == f, "validate said \(String(describing: failure)), topLevelMembers \(f)")
        } else {
            fuzzRequire(f.message == "expected a JSON object" && f.offset == (start ?? doc.count),
                        "non-object refused with \(f)")
        }
    }

    compareWithFoundation(doc, failure)
}

/// Strings decode as Foundation decodes them; integers as Int64(String) reads them.
func checkScalar(_ raw: UnsafeRawBufferPointer) {
    let text = String(decoding: raw, as: UTF8.self)
    let decoded = JSON.decodeString(raw)
    if raw.first == UInt8(ascii: "\"") {
        guard let decoded else { return fuzzRequire(false, "a valid string did not decode: \(show(raw))") }
        if let oracle = foundationValue(raw) as? String {
            fuzzRequire(Array(oracle.utf8) == Array(decoded.utf8),
                        "decodeString gave \(decoded.debugDescription), Foundation \(oracle.debugDescription)")
        }
        fuzzRequire(JSON.decodeInt64(raw) == nil, "a string read as an integer: \(show(raw))")
    } else {
        fuzzRequire(decoded == nil, "a non-string decoded as a string: \(show(raw))")
        fuzzRequire(JSON.decodeInt64(raw) == Int64(text), "decodeInt64(\(text)) != Int64(String)")
    }
}

func compareWithFoundation(_ doc: UnsafeRawBufferPointer, _ failure: JSON.Failure?) {
    // Foundation guesses UTF-16 and UTF-32 from NUL bytes and skips a byte order mark: such
    // documents are not UTF-8 JSON to it, so there is nothing to compare.
    if doc.contains(0) || doc.starts(with: [0xEF, 0xBB, 0xBF]) { return }
    let accepted = foundationValue(doc) != nil
    if failure == nil && !accepted {
        fuzzRequire(hasSurrogateEscape(doc) || hasHugeNumber(doc), "validate accepted what Foundation refuses: \(show(doc))")
    }
}

func foundationValue(_ bytes: UnsafeRawBufferPointer) -> Any? {
    try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])
}

func isSpace(_ c: UInt8) -> Bool { c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D }

/// Whether a `\uD800`...`\uDFFF` escape occurs (Foundation refuses unpaired ones).
func hasSurrogateEscape(_ doc: UnsafeRawBufferPointer) -> Bool {
    var i = 0
    while i + 2 < doc.count {
        if doc[i] == UInt8(ascii: "\\"), doc[i + 1] == UInt8(ascii: "u"), doc[i + 2] | 0x20 == UInt8(ascii: "d") { return true }
        i += doc[i] == UInt8(ascii: "\\") ? 2 : 1
    }
    return false
}

/// Whether a number with an exponent or with more than 300 digits in a row occurs (Foundation
/// refuses numbers that overflow a Double, like 1e999).
func hasHugeNumber(_ doc: UnsafeRawBufferPointer) -> Bool {
    var digits = 0
    for c in doc {
        if (c == UInt8(ascii: "e") || c == UInt8(ascii: "E")) && digits > 0 { return true }
        digits = (0x30...0x39).contains(c) ? digits + 1 : 0
        if digits > 300 { return true }
    }
    return false
}

@main enum FuzzJSONMain { static func main() { FuzzMain.run(fuzzJSON) } }
