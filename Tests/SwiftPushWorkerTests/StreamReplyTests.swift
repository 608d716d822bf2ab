import CHiredis
@testable import SwiftPushWorker
@testable import SwiftPushWorkerMachine
@testable import SwiftPushWorkerRedis
import Testing

/// Stream replies parsed in place from hiredis's reply tree, and the packed entries they become.
/// The replies are real RESP bytes turned into trees by hiredis's own reader.
@Suite("Stream replies and packed entries", .timeLimit(.minutes(1)))
struct StreamReplyTests {
    /// Parses `resp` with hiredis's reader and hands the tree to `body`.
    func withReply<T>(_ resp: String, _ body: (UnsafePointer<redisReply>) -> T) -> T {
        let reader = redisReaderCreate()!
        defer { redisReaderFree(reader) }
        let bytes = Array(resp.utf8)
        #expect(bytes.withUnsafeBufferPointer { b in
            b.withMemoryRebound(to: CChar.self) { redisReaderFeed(reader, $0.baseAddress, b.count) }
        } == REDIS_OK)
        var raw: UnsafeMutableRawPointer?
        #expect(redisReaderGetReply(reader, &raw) == REDIS_OK)
        defer { freeReplyObject(raw) }
        return body(UnsafePointer(raw!.assumingMemoryBound(to: redisReply.self)))
    }

    /// RESP for a bulk string.
    func bulk(_ s: String) -> String { "$\(s.utf8.count)\r\n\(s)\r\n" }

    @Test("An XREADGROUP reply becomes entries with their fields in order, duplicates and all")
    func readReply() {
        let fields1 = ["id", "n-1", "app", "demo", "payload", #"{"aps":{}}"#, "id", "again"]
        let resp = "*1\r\n*2\r\n" + bulk("push:{0}") + "*2\r\n"
            + "*2\r\n" + bulk("17-1") + "*\(fields1.count)\r\n" + fields1.map(bulk).joined()
            + "*2\r\n" + bulk("17-2") + "*-1\r\n"
        let (entries, error) = withReply(resp, RedisStreamReplies.entries(fromRead:))
        #expect(error == nil)
        #expect(entries.map(\.entryID) == ["17-1", "17-2"])
        let e = entries[0]
        #expect(e.fieldCount == 4 && e.count("id") == 2 && e.count("app") == 1 && e.count("token") == 0)
        #expect(e.value("id").map(Array.init) == Array("n-1".utf8))
        #expect(e.value("payload").map(Array.init) == Array(#"{"aps":{}}"#.utf8))
        #expect(e.value("token") == nil)
        #expect(e.fields.map { String(decoding: $0.name, as: UTF8.self) } == ["id", "app", "payload", "id"])
        #expect(e == QueueEntry(entryID: "17-1", stride(from: 0, to: fields1.count, by: 2).map { (fields1[$0], fields1[$0 + 1]) }))
        // A deleted entry (nil fields) has none.
        #expect(entries[1].fieldCount == 0 && entries[1].value("id") == nil)
    }

    @Test("A nil read (nothing new) is no entries; an error reply is handed back as such")
    func nilAndError() {
        let (none, noError) = withReply("*-1\r\n", RedisStreamReplies.entries(fromRead:))
        #expect(none.isEmpty && noError == nil)
        let (entries, error) = withReply("-NOGROUP No such key\r\n", RedisStreamReplies.entries(fromRead:))
        #expect(entries.isEmpty && error == .error("NOGROUP No such key"))
    }

    @Test("Empty names and values survive packing, and equality compares every byte")
    func packing() {
        let a = QueueEntry(entryID: "1-1", [("", "x"), ("k", ""), ("k", "v")])
        #expect(a.fieldCount == 3 && a.count("k") == 2)
        #expect(a.value("k").map(Array.init) == [])
        #expect(a.fields.map { [String(decoding: $0.name, as: UTF8.self), String(decoding: $0.value, as: UTF8.self)] }
                == [["", "x"], ["k", ""], ["k", "v"]])
        #expect(a != QueueEntry(entryID: "1-1", [("", "x"), ("k", "v"), ("k", "")]))
        #expect(a != QueueEntry(entryID: "1-1", [("", "x"), ("k", ""), ("k", "v")], deliveries: 2))
    }
}
