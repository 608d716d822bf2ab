#if canImport(Glibc)
import Glibc
#endif
import CHiredis
import SwiftPushRedis
import SwiftPushWorkerMachine

/// Stream entries out of Redis's replies: an XREADGROUP batch read in place from hiredis's tree
/// (each entry's fields copied once, into its packed storage), and the rows of the scripts that
/// take entries back or over.
enum RedisStreamReplies {
    /// An entry from a script's `{id, fields, deliveries, written}` row (fields nil for a
    /// deleted entry: no fields).
    static func entry(fromScriptRow row: RedisReply) -> QueueEntry? {
        let p = row.elements
        guard p.count >= 3, let id = p[0].text else { return nil }
        let flat = p[1].elements
        var fields: [(name: [UInt8], value: [UInt8])] = []
        for i in stride(from: 0, to: flat.count / 2 * 2, by: 2) {
            if case .string(let n) = flat[i], case .string(let v) = flat[i + 1] { fields.append((n, v)) }
        }
        var entry = QueueEntry(entryID: id, fields: fields, deliveries: Int(p[2].integer ?? 1))
        if p.count > 3 { entry.written = Int(p[3].integer ?? 0) }
        return entry
    }

    /// Entries of an XREADGROUP reply, `[[stream, [[id, [f, v, ...]], ...]]]` or nil, read in
    /// place from hiredis's tree: each entry's fields are copied once, into its packed storage.
    /// An error reply comes back as the second element (and no entries).
    static func entries(fromRead r: UnsafePointer<redisReply>) -> ([QueueEntry], RedisReply?) {
        if r.pointee.type == REDIS_REPLY_ERROR { return ([], RedisConnection.convert(r)) }
        var entries: [QueueEntry] = []
        // One element per stream with entries, in the order the read named them (the fast lane
        // first); a fast-lane entry is named `f<id>` from here on (FastLane).
        for s in 0..<(r.pointee.type == REDIS_REPLY_ARRAY ? Int(r.pointee.elements) : 0) {
            guard let stream = element(r, s), stream.pointee.type == REDIS_REPLY_ARRAY, stream.pointee.elements == 2,
                  let list = element(stream, 1) else { continue }
            let fast = element(stream, 0).flatMap(text).map(FastLane.isFastStream) ?? false
            entries.reserveCapacity(entries.count + (list.pointee.type == REDIS_REPLY_ARRAY ? Int(list.pointee.elements) : 0))
            for i in 0..<(list.pointee.type == REDIS_REPLY_ARRAY ? Int(list.pointee.elements) : 0) {
                guard let e = element(list, i), e.pointee.type == REDIS_REPLY_ARRAY, e.pointee.elements == 2,
                      let id = element(e, 0).flatMap(text) else { continue }
                entries.append(entry(id: fast ? FastLane.prefix + id : id, fields: element(e, 1)))
            }
        }
        return (entries, nil)
    }

    /// An entry from its id and flat field list (a deleted entry has nil fields: no fields).
    static func entry(id: String, fields: UnsafePointer<redisReply>?) -> QueueEntry {
        guard let fields, fields.pointee.type == REDIS_REPLY_ARRAY else {
            return QueueEntry(entryID: id, packer: QueueEntry.Packer(fieldCount: 0, byteCount: 0))
        }
        let n = Int(fields.pointee.elements) / 2 * 2
        var byteCount = 0
        for i in 0..<n { byteCount += element(fields, i).map { Int($0.pointee.len) } ?? 0 }
        var packer = QueueEntry.Packer(fieldCount: n / 2, byteCount: byteCount)
        for i in stride(from: 0, to: n, by: 2) {
            guard let name = element(fields, i).flatMap(bytes), let value = element(fields, i + 1).flatMap(bytes) else { continue }
            packer.append(name)
            packer.append(value)
        }
        return QueueEntry(entryID: id, packer: packer)
    }

    /// Element `i` of array reply `r`, if it has one.
    private static func element(_ r: UnsafePointer<redisReply>, _ i: Int) -> UnsafePointer<redisReply>? {
        guard r.pointee.type == REDIS_REPLY_ARRAY, i < Int(r.pointee.elements), let e = r.pointee.element[i] else { return nil }
        return UnsafePointer(e)
    }

    /// The bytes of bulk string `r` (valid while the reply lives).
    private static func bytes(_ r: UnsafePointer<redisReply>) -> UnsafeRawBufferPointer? {
        guard r.pointee.type == REDIS_REPLY_STRING else { return nil }
        return UnsafeRawBufferPointer(start: r.pointee.str, count: Int(r.pointee.len))
    }

    /// Bulk string `r` as text.
    private static func text(_ r: UnsafePointer<redisReply>) -> String? {
        bytes(r).map { String(decoding: $0, as: UTF8.self) }
    }
}
