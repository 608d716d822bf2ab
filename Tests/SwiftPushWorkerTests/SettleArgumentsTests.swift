import SwiftPushRedis
@testable import SwiftPushWorker
@testable import SwiftPushWorkerMachine
@testable import SwiftPushWorkerRedis
import Testing

@Suite("Script arguments", .timeLimit(.minutes(1)))
struct SettleArgumentsTests {
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
