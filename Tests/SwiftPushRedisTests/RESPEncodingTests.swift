import CHiredis
import SwiftPushRedis
import Testing

/// Commands written by `RedisArguments.writeRESP`, checked against hiredis's own formatter.
@Suite("RESP encoding", .timeLimit(.minutes(1)))
struct RESPEncodingTests {
    /// hiredis's `redisFormatCommandArgv` output for `args`.
    func hiredisFormat(_ args: [[UInt8]]) -> [UInt8] {
        var joined: [UInt8] = []
        var lengths: [Int] = []
        for a in args { joined += a; lengths.append(a.count) }
        joined.append(0)
        return joined.withUnsafeBufferPointer { all -> [UInt8] in
            var pointers: [UnsafePointer<CChar>?] = []
            var at = 0
            for n in lengths {
                pointers.append(UnsafeRawPointer(all.baseAddress! + at).assumingMemoryBound(to: CChar.self))
                at += n
            }
            var target: UnsafeMutablePointer<CChar>?
            let n = redisFormatCommandArgv(&target, Int32(args.count), &pointers, lengths)
            defer { redisFreeCommand(target) }
            return Array(UnsafeRawBufferPointer(start: target, count: Int(n)))
        }
    }

    @Test("Commands are written byte for byte as hiredis formats them, binary and empty arguments included")
    func sameAsHiredis() {
        let cases: [[[UInt8]]] = [
            [Array("PING".utf8)],
            [Array("SET".utf8), Array("k".utf8), []],
            [Array("XADD".utf8), Array("push:{0}".utf8), Array("*".utf8), Array("payload".utf8), [0, 13, 10, 255, 36, 42]],
            [Array("EVALSHA".utf8)] + (0..<1200).map { Array("argument-\($0)".utf8) },
        ]
        for c in cases {
            var out: [UInt8] = []
            RedisArguments(c).writeRESP(into: &out)
            #expect(out == hiredisFormat(c))
        }
    }

    @Test("Integers are written in decimal, negative and extreme values included")
    func integers() {
        var args = RedisArguments()
        for v: Int64 in [0, 7, -42, Int64.max, Int64.min] { args.append(integer: v) }
        #expect(args.strings == ["0", "7", "-42", String(Int64.max), String(Int64.min)])
    }
}
