import CSwiftPushABI
import FuzzSupport
import PushCore

/// A (pointer, length) argument as a C caller would pass it, in a buffer of exactly its size.
final class CString {
    /// NULL, or a buffer holding `content` and a NUL.
    let pointer: UnsafeMutablePointer<CChar>?
    /// The length argument: 0 (NUL-terminated), the content's length, or one the library must
    /// refuse before reading (larger than the field allows, or 2^63 and more as size_t).
    let length: Int
    let content: [UInt8]
    let oversized: Bool

    init(_ content: [UInt8], length: Int? = nil, null: Bool = false) {
        self.content = content
        oversized = length.map { $0 < 0 || $0 > content.count } ?? false
        self.length = length ?? content.count
        if null {
            pointer = nil
        } else {
            let p = UnsafeMutablePointer<CChar>.allocate(capacity: content.count + 1)
            content.withUnsafeBytes { UnsafeMutableRawPointer(p).copyMemory(from: $0.baseAddress ?? UnsafeRawPointer(p), byteCount: $0.count) }
            p[content.count] = 0
            pointer = p
        }
    }

    deinit { pointer?.deallocate() }

    /// A fuzzed argument; `limit` is the longest length the library accepts for it, above which
    /// it must refuse without reading (nil: no such promise, so no oversized lengths).
    static func fuzzed(_ input: inout FuzzInput, limit: Int?, content: [UInt8]? = nil) -> CString {
        let bytes = content ?? input.bytes()
        switch input.choose(10) {
        case 0: return CString(bytes, null: true)
        case 1, 2: return CString(bytes, length: 0)
        case 3 where limit != nil: return CString(bytes, length: limit! + 1 + Int(input.byte()) * 97)
        case 4: return CString(bytes, length: input.pick([Int.min, -1, Int.min + 1, -Int(input.byte()) - 1]))
        default: return CString(bytes)
        }
    }

    /// What the library reads: nil for NULL; up to the first NUL for length 0.
    var seen: [UInt8]? {
        guard pointer != nil else { return nil }
        if length == 0 { return Array(content.prefix { $0 != 0 }) }
        return content
    }

    /// Runs `body` with the bytes the library sees, as a buffer.
    func withSeen<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R? {
        seen.map { $0.withUnsafeBytes(body) }
    }
}

/// Checks one call's status against `err` and the statuses the function documents.
func checkStatus(_ rc: Int32, _ err: push_error, allowed: Set<PushStatus>, _ call: String) {
    let message = withUnsafeBytes(of: err.message) { raw -> [UInt8]? in
        guard let end = raw.firstIndex(of: 0) else { return nil }
        return Array(raw[..<end])
    }
    fuzzRequire(message != nil, "\(call): message is not NUL-terminated")
    fuzzRequire(err.code == rc, "\(call): returned \(rc) but err.code is \(err.code)")
    guard let status = PushStatus(rawValue: rc) else { return fuzzRequire(false, "\(call): unknown status \(rc)") }
    if status == .ok {
        fuzzRequire(message!.isEmpty, "\(call): succeeded with a message")
    } else {
        fuzzRequire(allowed.contains(status), "\(call): returned \(status), which it does not document")
        fuzzRequire(!message!.isEmpty, "\(call): refused (\(status)) without a message")
        fuzzRequire(String(validating: message!, as: UTF8.self) != nil, "\(call): message is not UTF-8: \(show(message!))")
    }
}
