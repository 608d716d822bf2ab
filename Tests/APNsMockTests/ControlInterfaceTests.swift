#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import PushCore
@testable import APNsMock

extension MockTests {
    /// The CLI's mock and its control interface, driven from outside the process.
    @Suite(.timeLimit(.minutes(5))) struct ControlInterfaceTests {
        let pki = TestPKI.shared

        func load(_ mock: MockProcess, count: Int, token: String = TestPKI.token) throws -> Tool.LoadResult {
            Tool.h2load(Tool.h2loadArguments(port: mock.port, count: count, authorization: try pki.authorization(),
                                             token: token, payloadFile: pki.payloadFile))
        }

        @Test("GET /stats and /record show what the CLI's mock processed; POST /record/reset empties the record")
        func statsAndRecord() throws {
            let mock = try MockProcess(["--record"])
            defer { mock.stop() }
            #expect(try load(mock, count: 4).status2xx == 4)
            let stats = try #require(try mock.controlJSON("GET", "/stats") as? [String: Any])
            #expect(stats["requests"] as? Int == 4)
            #expect(stats["accepted"] as? Int == 4)
            #expect(stats["connections"] as? Int == 1)
            #expect(stats["records"] as? Int == 4)
            let record = try #require(try mock.controlJSON("GET", "/record") as? [[String: Any]])
            #expect(record.count == 4)
            #expect(record.first?["device_token"] as? String == TestPKI.token)
            #expect(record.first?["status"] as? Int == 200)
            #expect(record.first?["reason"] as? String == "")
            #expect(record.first?["connection"] as? Int == 1)
            #expect(record.map { $0["stream"] as? Int ?? 0 } == [1, 3, 5, 7])
            #expect((record.first?["apns_id"] as? String)?.count == 36)
            // When each arrived (UNIX µs): after 2023, in order.
            let received = record.map { $0["received_us"] as? Int ?? 0 }
            #expect(received.allSatisfy { $0 > 1_700_000_000_000_000 } && received == received.sorted(), "\(received)")
            #expect(try mock.control("POST", "/record/reset").body == #"{"ok":true}"#)
            #expect((try mock.controlJSON("GET", "/record") as? [Any])?.isEmpty == true)
            #expect(mock.stop() == 0)
            #expect(mock.output.contains("requests 4 accepted 4"), "\(mock.output)")
        }

        @Test("POST /faults replaces the faults of a running CLI mock")
        func postFaults() throws {
            let mock = try MockProcess(["--record"])
            defer { mock.stop() }
            let busy = String(repeating: "cd", count: 32)
            let body = """
            {"status_500_every_nth": 2, "unregistered_tokens": {"\(busy)": 1700000000789}, "too_many_requests_tokens": [],
             "goaway_reason": "Shutdown", "seed": 7}
            """
            #expect(try mock.control("POST", "/faults", body: body).status == 200)
            let faults = try #require(try mock.controlJSON("GET", "/faults") as? [String: Any])
            #expect(faults["status_500_every_nth"] as? Int == 2)
            #expect(faults["seed"] as? Int == 7)
            #expect(try load(mock, count: 4).status5xx == 2)
            let gone = Tool.nghttp(port: mock.port, path: "/3/device/\(busy)", headers: try pki.validHeaders(), payloadFile: pki.payloadFile)
            #expect(gone.output.contains(#"{"reason":"Unregistered","timestamp":1700000000789}"#), "\(gone.output)")
            // Replacing with nothing turns every fault off.
            #expect(try mock.control("POST", "/faults", body: "{}").status == 200)
            #expect(try load(mock, count: 4).status2xx == 4)
        }

        @Test("Bad control requests get 400, 404 or 405 with a JSON error")
        func badRequests() throws {
            let mock = try MockProcess([])
            defer { mock.stop() }
            for (body, needle) in [("{\"stall_every\": 2}", "unknown fault 'stall_every'"),
                                   ("{\"status_500_rate\": 2}", "'status_500_rate' must be a number from 0 to 1"),
                                   ("{\"stall_tokens\": \"abc\"}", "'stall_tokens' must be an array of strings"),
                                   ("[1]", "the body must be a JSON object")] {
                let r = try mock.control("POST", "/faults", body: body)
                #expect(r.status == 400)
                #expect(r.body.contains(needle), "\(r.body)")
                #expect(r.body.hasPrefix(#"{"ok":false,"error":"#))
            }
            #expect(try mock.control("GET", "/nothing").status == 404)
            #expect(try mock.control("DELETE", "/faults").status == 405)
        }

        @Test("Fault flags take effect from the start, and the stall fault is seen in the record")
        func faultFlags() throws {
            let mock = try MockProcess(["--record", "--status-503-every", "3", "--development"])
            defer { mock.stop() }
            let result = try load(mock, count: 6)
            #expect(result.status5xx == 2, "\(result.output)")
            let r = Tool.nghttp(port: mock.port, path: "/3/device/\(TestPKI.token)", headers: try pki.validHeaders(),
                                payloadFile: pki.payloadFile)
            #expect(r.uniqueId != nil, "--development adds apns-unique-id: \(r.output)")
            #expect(try mock.control("POST", "/faults", body: #"{"stall_every_nth": 1}"#).status == 200)
            let stalled = try H2Probe.run(port: mock.port, [
                .send(path: "/3/device/\(TestPKI.token)", headers: H2Probe.headers(authorization: try pki.authorization())),
                .ping, .wait(answers: 1, pingAcks: 1, timeout: 0.5),
            ])
            #expect(stalled.responses.isEmpty, "\(stalled)")
            let record = try #require(try mock.controlJSON("GET", "/record") as? [[String: Any]])
            #expect(record.last?["status"] as? Int == 0)
            #expect(record.last?["reason"] as? String == "stalled")
        }

        @Test("Every fault has a control-interface key, and GET /faults reads back what POST /faults set")
        func faultsRoundTrip() throws {
            var f = MockFaults()
            f.goawayAfterRequests = 10
            f.goawayReason = "Shutdown \"soon\""
            f.refuseEveryNthStream = 3
            f.dropLimitToOneAfterRejection = true
            f.unregisteredTokens = ["aa": 1_700_000_000_000]
            f.tooManyRequestsTokens = ["bb", "cc"]
            f.status500EveryNth = 5
            f.status503EveryNth = 6
            f.status500Rate = 0.125
            f.status503Rate = 0.5
            f.stallEveryNth = 7
            f.stallTokens = ["dd"]
            f.responseDelayMillis = 20
            f.killConnectionAfterRequests = 8
            f.refuseConnectionsUntil = 1_000_000_000 + 250_000_000
            f.seed = 99
            let json = f.controlJSON(now: 1_000_000_000)
            let back = try MockFaults(controlJSON: json, now: 1_000_000_000)
            #expect(back == f, "\(String(decoding: json, as: UTF8.self))")
            // Absent keys are off: the faults are replaced, not merged.
            #expect(try MockFaults(controlJSON: Array("{}".utf8), now: 0) == MockFaults())
            // null turns a count off.
            #expect(try MockFaults(controlJSON: Array(#"{"stall_every_nth": null}"#.utf8), now: 0).stallEveryNth == nil)
        }

        @Test("mock --help lists the fault flags and the control interface")
        func help() {
            let r = Tool.run(MockProcess.cliPath, ["mock", "--help"])
            #expect(r.status == 0)
            for flag in ["--goaway-after", "--goaway-reason", "--refuse-every", "--drop-limit-after-rejection", "--unregistered",
                         "--too-many-requests", "--status-500-every", "--status-503-every", "--status-500-rate", "--status-503-rate",
                         "--stall-every", "--stall-token", "--delay-ms", "--kill-after", "--refuse-connections-ms", "--seed",
                         "--development", "--record", "--control-port-file", "GET /stats", "POST /faults"] {
                #expect(r.output.contains(flag), "\(flag) missing from mock --help")
            }
        }
    }
}
