import SwiftPushRedis
import Testing
@testable import SwiftPushStatus

/// The fast lane in the status views (issue 32, item 1): `push:{s}:fast`'s entries and its
/// group's figures count in the shard's waiting and pending entries, and in what remains.
@Suite("Status: the fast lane's entries are counted")
struct FastLaneReadingTests {
    @Test("A reading of both lanes adds the fast lane's length, pending entries and lag to the shard's")
    func fastLaneAdded() throws {
        let r = try Replies.reading("0", Replies.shard(length: 40, groups: Replies.group(pending: 10, lag: 30, entriesRead: 50),
                                                      fastLength: 7, fastGroups: Replies.group(pending: 2, lag: 5, entriesRead: 9)))
        #expect(r.fastLength == 7 && r.streamLength == 47)
        #expect(r.pending == 12 && r.waiting == 35)
        #expect(r.remaining(.all) == 47)
    }

    @Test("Entries waiting in the fast lane alone (no bulk stream yet) are waiting entries, not an empty shard")
    func fastLaneAlone() throws {
        let r = try Replies.reading("0", Replies.shard(fastLength: 3, fastGroups: Replies.group(pending: 0, lag: 3, entriesRead: 0)))
        #expect(r.streamExists && r.waiting == 3)
    }

    @Test("The read asks for the fast lane's length and group")
    func commandsNameTheFastLane() {
        let c = ShardReading.commands(StatusKeys(shard: "7"), group: "senders")
        #expect(Array(c[10...11]) == [["XLEN", "push:{7}:fast"], ["XINFO", "GROUPS", "push:{7}:fast"]])
    }
}
