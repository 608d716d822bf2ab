import SwiftPushRedis
@testable import SwiftPushWorker
import Testing

@Suite("Settle script arguments")
struct SettleArgumentsTests {
    func sent() -> OutcomeRecord {
        var o = OutcomeRecord(id: "n-1", entryID: "17-3", kind: .accepted)
        o.status = 200
        o.app = "demo"
        o.token = "00ff"
        o.apnsID = "5b0f3f1e-8c53-4b8e-9d6a-2f1c7a4e9b30"
        o.attempts = 2
        o.deliveries = 3
        o.latencyUs = 1234
        return o
    }

    @Test("A sent-shape outcome's values, put back with the shape's names, are exactly its outcome fields")
    func sentShapeMatchesFields() {
        let o = sent()
        #expect(o.hasSentShape)
        var args = RedisArguments()
        RedisStreamQueue.append(.record(o), to: &args, keys: StreamKeys(shard: "t"), worker: "w1")
        let a = args.strings
        #expect(a.count == 3 + OutcomeRecord.sentShapeValueCount && a[0] == "s" && a[1] == "out:{t}:id:n-1" && a[2] == "17-3")
        var values = a.dropFirst(3).makeIterator()
        var rebuilt: [String] = []
        for name in OutcomeRecord.sentShape {
            rebuilt.append(name)
            switch name {
            case "v": rebuilt.append("1")
            case "entry": rebuilt.append(o.entryID)
            case "worker": rebuilt.append("w1")
            default: rebuilt.append(values.next() ?? "<missing>")
            }
        }
        #expect(values.next() == nil)
        #expect(rebuilt == o.fields(worker: "w1"))
    }

    @Test("The script's XADD names every field of the shape once, and steps over exactly its values")
    func scriptMatchesShape() {
        let xadd = RedisStreamScripts.sentShapeArguments(first: 3)
        for name in OutcomeRecord.sentShape { #expect(xadd.components(separatedBy: "'\(name)',").count == 2) }
        #expect(xadd.contains("ARGV[i+3]") && xadd.contains("ARGV[i+\(2 + OutcomeRecord.sentShapeValueCount)]"))
        #expect(!xadd.contains("ARGV[i+\(3 + OutcomeRecord.sentShapeValueCount)]"))
        #expect(RedisStreamScripts.settle.body.contains("next = i + \(3 + OutcomeRecord.sentShapeValueCount)"))
        #expect(RedisStreamScripts.settle.body.contains(xadd))
    }

    @Test("Outcomes with more to say (detail, 410 timestamp, maybe delivered, never sent) take the general form")
    func generalForm() {
        var withDetail = sent(); withDetail.detail = "why"
        var gone = sent(); gone.status = 410; gone.timestampMs = 99; gone.kind = .rejected
        var maybe = sent(); maybe.kind = .failed; maybe.maybeDelivered = true
        let rejected = OutcomeRecord(id: "x", entryID: "1-0", kind: .rejected)
        for o in [withDetail, gone, maybe, rejected] {
            #expect(!o.hasSentShape)
            var args = RedisArguments()
            RedisStreamQueue.append(.record(o), to: &args, keys: StreamKeys(shard: "t"), worker: "w1")
            let a = args.strings
            let n1 = Int(a[3])!, n2 = Int(a[4])!
            #expect(a[0] == "o" && a[2] == o.entryID && a.count == 5 + n1 + n2)
            #expect(Array(a[5..<(5 + n1)]) == o.fields(worker: "w1"))
            #expect(n2 == (o.tokenIsGone ? 10 : 0))
        }
    }

    @Test("Integers are written in decimal, signs and zero included")
    func integers() {
        var args = RedisArguments()
        for n: Int64 in [0, 7, -42, 1_234_567_890_123, Int64.min] { args.append(integer: n) }
        #expect(args.strings == ["0", "7", "-42", "1234567890123", String(Int64.min)])
    }

    @Test("A script is named by the SHA-1 of its text (what EVALSHA and SCRIPT LOAD use)")
    func scriptSHA() {
        // sha1("return 1"), as redis-cli SCRIPT LOAD "return 1" prints it.
        #expect(RedisScript("return 1").sha == "e0e1f9fabfc9d4800c877a703b823ac0578ff8db")
    }
}
