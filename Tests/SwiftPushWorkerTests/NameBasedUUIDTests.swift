import SwiftPushWorker
import Testing

@Suite("NameBasedUUID", .timeLimit(.minutes(1)))
struct NameBasedUUIDTests {
    @Test("The RFC's version-5 vector: python.org in the DNS namespace")
    func standardVector() {
        // uuid.uuid5(uuid.NAMESPACE_DNS, "python.org") in CPython.
        #expect(NameBasedUUID.make(namespace: NameBasedUUID.dnsNamespace, name: Array("python.org".utf8))
                == "886313e1-3b8a-5372-9b90-0c9aee199e5d")
    }

    @Test("The same id always gives the same apns-id; different ids give different ones")
    func deterministic() {
        let a = NameBasedUUID.make(name: Array("n-1".utf8))
        #expect(a == NameBasedUUID.make(name: Array("n-1".utf8)))
        #expect(a != NameBasedUUID.make(name: Array("n-2".utf8)))
        let all = Set((0..<10_000).map { NameBasedUUID.make(name: Array("id-\($0)".utf8)) })
        #expect(all.count == 10_000)
    }

    @Test("apns-ids are version 5, RFC variant, lowercase canonical text")
    func format() {
        let u = Array(NameBasedUUID.make(name: Array("x".utf8)).utf8)
        #expect(u.count == 36 && u[14] == UInt8(ascii: "5") && Set("89ab".utf8).contains(u[19]))
        #expect(u.allSatisfy { Set("0123456789abcdef-".utf8).contains($0) })
    }

    @Test("The project namespace matches the one documented (docs/worker.md)")
    func namespace() {
        #expect(NameBasedUUID.parse("5b0f3f1e-8c53-4b8e-9d6a-2f1c7a4e9b30") == NameBasedUUID.notificationNamespace)
        #expect(NameBasedUUID.parse("not-a-uuid") == nil)
    }
}
