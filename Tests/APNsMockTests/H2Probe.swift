import Foundation
import Testing

/// Runs `Tests/support/h2_probe.py`: a scripted HTTP/2 client on PyPI's `h2`, for what nghttp
/// and h2load cannot do (misbehave on purpose, several tokens on one connection) or do not
/// show (every SETTINGS value, GOAWAY debug data, resets).
///
/// `h2` is installed by the tests themselves into a directory of their own (pip --target),
/// once per machine; a Python that already has it is used as is.
enum H2Probe {
    /// One step of a scenario (see h2_probe.py).
    enum Step {
        /// Opens `count` request streams at once, without reading; `force` ignores the
        /// server's MAX_CONCURRENT_STREAMS.
        case send(path: String, headers: [(String, String)], body: String = TestPKI.payload, count: Int = 1, force: Bool = false,
                  method: String = "POST")
        /// Reads until the totals are reached, or `timeout` seconds pass.
        case wait(answers: Int = 0, settings: Int = 0, goaway: Bool = false, closed: Bool = false, pingAcks: Int = 0,
                  timeout: Double = 5)
        /// Sends a PING.
        case ping
        /// Pauses the client until the test has run `whileHeld` (e.g. moved a clock).
        case hold

        var json: [String: Any] {
            switch self {
            case let .send(path, headers, body, count, force, method):
                return ["send": ["path": path, "headers": headers.map { [$0.0, $0.1] }, "body": body, "count": count, "force": force,
                                 "method": method]]
            case let .wait(answers, settings, goaway, closed, pingAcks, timeout):
                return ["await": ["answers": answers, "settings": settings, "goaway": goaway, "closed": closed,
                                  "ping_acks": pingAcks, "timeout": timeout]]
            case .ping:
                return ["ping": [:] as [String: Any]]
            case .hold:
                return ["hold": [:] as [String: Any]]
            }
        }
    }

    /// One thing the probe saw.
    struct Event: Decodable, CustomStringConvertible {
        var type: String
        var stream: Int?
        var status: Int?
        var headers: [String: String]?
        var body: String?
        var code: Int?
        var last_stream_id: Int?
        var error_code: Int?
        var debug: String?
        var max_concurrent_streams: Int?
        /// "records": TLS records read so far.
        var read: Int?

        var description: String {
            switch type {
            case "response": return "response(\(stream ?? 0): \(status ?? 0) \(body ?? ""))"
            case "reset": return "reset(\(stream ?? 0), \(code ?? 0))"
            case "goaway": return "goaway(\(last_stream_id ?? 0), \(error_code ?? 0), \(debug ?? ""))"
            case "settings": return "settings(\(max_concurrent_streams.map(String.init) ?? "-"))"
            case "records": return "records(\(read ?? 0))"
            default: return type
            }
        }
    }

    /// What a run saw, with accessors for the usual questions.
    struct Result: CustomStringConvertible {
        var events: [Event]
        var output: String

        var responses: [Event] { events.filter { $0.type == "response" } }
        var resets: [Event] { events.filter { $0.type == "reset" } }
        var goaway: Event? { events.first { $0.type == "goaway" } }
        var closed: Bool { events.contains { $0.type == "closed" } }
        /// MAX_CONCURRENT_STREAMS of each SETTINGS frame that carried it, in order.
        var streamLimits: [Int] { events.compactMap { $0.type == "settings" ? $0.max_concurrent_streams : nil } }
        /// TLS records read by the end of each `.wait` step, in order.
        var recordsRead: [Int] { events.compactMap { $0.type == "records" ? $0.read : nil } }
        var description: String { events.isEmpty ? output : events.map(\.description).joined(separator: ", ") }
    }

    static let script = TestPKI.root.appendingPathComponent("Tests/support/h2_probe.py").path

    /// Why `h2` could not be had.
    struct SetupFailure: Error { let message: String }

    /// PYTHONPATH for a Python with `h2` ("" when python3 has it already), or why there is none.
    static let pythonPath: Swift.Result<String, SetupFailure> = {
        if Tool.run("/usr/bin/env", ["python3", "-c", "import h2"]).status == 0 { return .success("") }
        let dir = NSTemporaryDirectory() + "swiftpush-test-python-h2"
        if FileManager.default.fileExists(atPath: dir + "/h2/__init__.py") { return .success(dir) }
        let r = Tool.run("/usr/bin/env", ["python3", "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                                          "--target", dir, "h2"])
        guard r.status == 0 else { return .failure(SetupFailure(message: "cannot install h2 from PyPI: \(r.output)")) }
        return .success(dir)
    }()

    /// One request (on a token connection its answer raises the stream limit), then `count`
    /// more at once, then `after` (e.g. a `.wait`; none: the client leaves at once).
    static func burst(port: Int, path: String, authorization: String, count: Int, then after: [Step]) throws -> Result {
        let headers = headers(authorization: authorization)
        return try run(port: port, [
            .send(path: path, headers: headers), .wait(answers: 1, settings: 2),
            .send(path: path, headers: headers, count: count),
        ] + after)
    }

    /// Runs a scenario against 127.0.0.1:`port`. At a `.hold` step the client waits while
    /// `whileHeld` runs here.
    static func run(port: Int, clientCertificate: (cert: String, key: String)? = nil, _ steps: [Step],
                    whileHeld: () -> Void = {}) throws -> Result {
        let path: String
        switch pythonPath {
        case .success(let p): path = p
        case .failure(let f):
            Issue.record(Comment(rawValue: f.message))
            return Result(events: [], output: f.message)
        }
        var scenario: [String: Any] = ["port": port, "steps": steps.map(\.json)]
        if let c = clientCertificate {
            scenario["cert"] = c.cert
            scenario["key"] = c.key
        }
        // The hold handshake goes through two files: the probe makes "held" and waits for "go".
        let base = NSTemporaryDirectory() + "swiftpush-h2probe-\(getpid())-\(UUID().uuidString)"
        scenario["held_file"] = base + ".held"
        scenario["go_file"] = base + ".go"
        defer {
            try? FileManager.default.removeItem(atPath: base + ".held")
            try? FileManager.default.removeItem(atPath: base + ".go")
        }
        let holds = steps.contains { if case .hold = $0 { return true } else { return false } }
        let input = try JSONSerialization.data(withJSONObject: scenario)
        let r = Tool.run("/usr/bin/env", ["python3", script], stdin: input,
                         environment: path.isEmpty ? nil : ["PYTHONPATH": path]) {
            guard holds else { return }
            let held = eventually(timeout: 10) { FileManager.default.fileExists(atPath: base + ".held") }
            #expect(held, "the probe never reached its hold step")
            whileHeld()
            _ = FileManager.default.createFile(atPath: base + ".go", contents: Data())
        }
        struct Output: Decodable { var events: [Event] }
        guard let line = r.output.split(separator: "\n").last(where: { $0.hasPrefix("{") }),
              let decoded = try? JSONDecoder().decode(Output.self, from: Data(line.utf8)) else {
            Issue.record("h2_probe.py failed: \(r.output)")
            return Result(events: [], output: r.output)
        }
        return Result(events: decoded.events, output: r.output)
    }

    /// The headers of a valid request, plus `extra`.
    static func headers(authorization: String?, topic: String = "com.example.app",
                        _ extra: [(String, String)] = []) -> [(String, String)] {
        var h = [("apns-topic", topic), ("apns-push-type", "alert")]
        if let authorization { h.append(("authorization", authorization)) }
        return h + extra
    }
}
