import SwiftPushWorker
import Testing

@Suite("StreamID", .timeLimit(.minutes(1)))
struct StreamIDTests {
    @Test("Ids compare by time then sequence, as numbers (not as text); anything else does not parse")
    func order() {
        #expect(StreamID("1700000000000-9")! < StreamID("1700000000000-10")!)
        #expect(StreamID("999-5")! < StreamID("1000-0")!)
        #expect(StreamID("5-5")! == StreamID("5-5")!)
        #expect(StreamID("5-5")!.description == "5-5")
        for bad in ["", "5", "5-", "-5", "a-1", "1-2-3", "$", ">"] { #expect(StreamID(bad) == nil) }
    }
}
