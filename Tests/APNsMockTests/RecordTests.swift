#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import PushCore
@testable import APNsMock

extension MockTests {
    /// What the mock remembers of the requests it processed, for exactly-once checks.
    @Suite(.timeLimit(.minutes(5))) struct RecordTests {
        let pki = TestPKI.shared
        var path: String { "/3/device/\(TestPKI.token)" }

        /// CLOCK_REALTIME in microseconds (what the record's `receivedMicros` reads).
        static func wallMicros() -> Int64 {
            var ts = timespec()
            clock_gettime(CLOCK_REALTIME, &ts)
            return Int64(ts.tv_sec) * 1_000_000 + Int64(ts.tv_nsec) / 1000
        }

        @Test("The record lists each processed request once: connection, stream, apns-id, token, status, reason")
        func recordContents() throws {
            let server = try pki.startServer()
            defer { server.stop() }
            let auth = try pki.authorization()
            let before = Self.wallMicros()
            var ids: [String] = []
            var uuids = UUIDGenerator()
            for _ in 0..<10 { ids.append(uuids.string()) }
            let r = try H2Probe.run(port: server.port, [
                .send(path: path, headers: H2Probe.headers(authorization: auth, [("apns-id", ids[0])])), .wait(answers: 1, settings: 2),
            ] + ids.dropFirst().map { .send(path: path, headers: H2Probe.headers(authorization: auth, [("apns-id", $0)])) }
              + [.send(path: "/3/device/xyz", headers: H2Probe.headers(authorization: auth)), .wait(answers: 11)])
            #expect(r.responses.count == 11, "\(r)")
            _ = try H2Probe.run(port: server.port, [
                .send(path: path, headers: H2Probe.headers(authorization: auth)), .wait(answers: 1),
            ])
            let record = server.record()
            let after = Self.wallMicros()
            #expect(record.count == 12)
            #expect(record.prefix(10).map(\.apnsId) == ids)
            // Each request's arrival time, in the order they were processed.
            #expect(record.allSatisfy { $0.receivedMicros >= before && $0.receivedMicros <= after }, "\(before) \(after)")
            #expect(zip(record, record.dropFirst()).allSatisfy { $0.receivedMicros <= $1.receivedMicros })
            #expect(record.prefix(11).allSatisfy { $0.connection == 1 })
            #expect(record.last?.connection == 2)
            #expect(record.prefix(11).map(\.stream) == Array(stride(from: 1, through: 21, by: 2)).map { Int32($0) })
            #expect(record[10].deviceToken == "xyz")
            #expect(record[10].status == 400 && record[10].reason == "BadDeviceToken")
            var expected = MockRecord(connection: 1, stream: 1, apnsId: ids[0], deviceToken: TestPKI.token, status: 200, reason: "")
            // The headers the probe sent (H2Probe.headers): topic, push type and authorization.
            expected.topic = "com.example.app"
            expected.pushType = .alert
            expected.hadAuthorization = true
            expected.receivedMicros = record[0].receivedMicros
            #expect(record[0] == expected)
            // Each answer's apns-id is the recorded one.
            let answered = Dictionary(uniqueKeysWithValues: r.responses.map { (Int32($0.stream!), $0.headers?["apns-id"] ?? "") })
            for rec in record.prefix(11) { #expect(answered[rec.stream] == rec.apnsId) }
            #expect(Set(record.map(\.apnsId)).count == 12, "apns-ids are unique")
        }

        @Test("h2load's requests are each recorded exactly once")
        func exactlyOnceUnderLoad() throws {
            // Accept-all: h2load opens its streams before reading SETTINGS, which a token
            // connection's limit of 1 would punish.
            let server = try pki.startServer { $0.tokenKeys = [] }
            defer { server.stop() }
            let result = Tool.h2load(Tool.h2loadArguments(port: server.port, count: 3000, connections: 3, streams: 50,
                                                          authorization: nil, payloadFile: pki.payloadFile))
            #expect(result.status2xx == 3000, "\(result.output)")
            let record = server.record()
            #expect(record.count == 3000)
            #expect(Set(record.map { "\($0.connection)/\($0.stream)" }).count == 3000)
            #expect(Set(record.map(\.apnsId)).count == 3000)
            #expect(Set(record.map(\.connection)) == [1, 2, 3])
            #expect(server.stats().records == 3000)
        }

        @Test("resetRecord empties the record and keeps the counters")
        func resetRecord() throws {
            let server = try pki.startServer()
            defer { server.stop() }
            _ = Tool.h2load(Tool.h2loadArguments(port: server.port, count: 5, authorization: try pki.authorization(), payloadFile: pki.payloadFile))
            #expect(server.record().count == 5)
            server.resetRecord()
            #expect(server.record().isEmpty)
            #expect(server.stats().accepted == 5)
        }

        @Test("Without recording, or past the limit, requests are only counted")
        func recordingOffAndLimit() throws {
            let off = try pki.startServer { $0.recordRequests = false }
            defer { off.stop() }
            let args = { (port: Int) throws in
                Tool.h2loadArguments(port: port, count: 5, authorization: try pki.authorization(), payloadFile: pki.payloadFile)
            }
            #expect(Tool.h2load(try args(off.port)).status2xx == 5)
            #expect(off.record().isEmpty)
            #expect(off.stats().accepted == 5)

            let limited = try pki.startServer { $0.recordLimit = 3 }
            defer { limited.stop() }
            #expect(Tool.h2load(try args(limited.port)).status2xx == 5)
            #expect(limited.record().count == 3)
            #expect(limited.stats().recordsDropped == 2)
        }
    }
}
