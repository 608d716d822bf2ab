@testable import SwiftPushWorker
@testable import SwiftPushWorkerMachine
@testable import SwiftPushWorkerRedis
import Testing

/// Which deliveries count toward `max_deliveries` (`DeliveryCharge`): the written ones, and
/// beyond an allowance of `2 × max_deliveries` the others too.
@Suite("Delivery charge")
struct DeliveryChargeTests {
    let charge = DeliveryCharge(maxDeliveries: 5)

    @Test("Written deliveries count; one more past max_deliveries is a dead letter")
    func writtenCount() {
        #expect(charge.charged(deliveries: 4, written: 4) == 4)
        #expect(!charge.exhausted(deliveries: 4, written: 4))
        #expect(charge.lastChance(deliveries: 4, written: 4))
        #expect(charge.exhausted(deliveries: 5, written: 5))
        #expect(!charge.lastChance(deliveries: 3, written: 3))
    }

    @Test("Deliveries no request was written in do not count, up to the allowance")
    func unwrittenAllowance() {
        #expect(charge.unwrittenAllowance == 10)
        #expect(charge.charged(deliveries: 10, written: 0) == 0)
        #expect(!charge.exhausted(deliveries: 14, written: 0))
        #expect(charge.lastChance(deliveries: 14, written: 0))
        #expect(charge.exhausted(deliveries: 15, written: 0))
        // Mixed: 3 written of 8 count 3; of 14, the allowance is passed by 4, so 4 count.
        #expect(charge.charged(deliveries: 8, written: 3) == 3)
        #expect(charge.charged(deliveries: 14, written: 3) == 4)
    }

    @Test("A written count above the delivery count (a retried record) is capped by it")
    func writtenCapped() {
        #expect(charge.charged(deliveries: 2, written: 3) == 2)
        #expect(!charge.exhausted(deliveries: 2, written: 7))
    }
}
