import Testing
@testable import SwiftPushKit

/// `WaiterTable` (the router's waiters by id) against a `Dictionary` under the router's use:
/// ids handed out in order, most removed soon, a few kept long (batches, cancelled waiters),
/// enough of them to grow the table and to wrap its index around, with removals that shift
/// entries back.
@Suite("Waiter table")
struct WaiterTableTests {
    @Test("Inserts, look-ups, updates and removals agree with a Dictionary through growth and wrap-around")
    func agreesWithDictionary() {
        var table = WaiterTable<Int>(capacity: 4)
        var model: [UInt64: Int] = [:]
        var live: [UInt64] = [] // model's keys, in no order
        var generator = SystemRandomNumberGenerator()
        var next: UInt64 = 1
        for step in 0..<30_000 {
            switch Int.random(in: 0..<10, using: &generator) {
            case 0..<5:
                // A new waiter; ids in order, now and then a jump (ids taken by other senders).
                next += Int.random(in: 0..<8, using: &generator) == 0 ? UInt64.random(in: 1...5000, using: &generator) : 1
                table[next] = step
                model[next] = step
                live.append(next)
            case 5..<9 where !live.isEmpty:
                // Removed: the oldest often (results come mostly in order), else any.
                let k = Bool.random(using: &generator) ? live.indices.min { live[$0] < live[$1] }! : Int.random(in: live.indices, using: &generator)
                let id = live[k]
                live.swapAt(k, live.count - 1)
                live.removeLast()
                if Bool.random(using: &generator), let slot = table.slot(of: id) {
                    table.remove(at: slot)
                } else {
                    table[id] = nil
                }
                model[id] = nil
            case 9 where !live.isEmpty:
                let id = live.randomElement(using: &generator)!
                let slot = table.slot(of: id)!
                table.setValue(-step, at: slot)
                model[id] = -step
            default:
                table[next + 1] = nil // removing what is not there changes nothing
            }
            #expect(table.count == model.count)
            if step % 500 == 0 {
                for (id, value) in model where table[id] != value {
                    Issue.record("step \(step): id \(id) holds \(String(describing: table[id])), not \(value)")
                    return
                }
                #expect(table[next + 1] == nil && table[0xFFFF_FFFF_FFFF] == nil)
            }
        }
    }
}
