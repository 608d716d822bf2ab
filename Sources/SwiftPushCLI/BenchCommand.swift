#if canImport(Glibc)
import Glibc
#endif
import Foundation
import CSwiftPushABI
import PushCore
import PushTransport

/// `swiftpush bench`: sends many notifications through the library as fast as it takes them
/// and reports the rate, client CPU per notification, peak RSS and latency, with a live progress
/// line. With `--pki DIR` it starts a mock server of its own (a separate process, so the CPU
/// figures are the client's alone) and, with `--h2load`, runs nghttp2's h2load against the same
/// server with the same request for a side-by-side ratio. `make bench` is the full protocol
/// (pinned CPUs, medians of several runs); this is the quick, interactive version.
enum BenchCommand {
    static let subcommand = Subcommand(
        name: "bench",
        summary: "Measure sending throughput, optionally against h2load on the same mock server.",
        options: [
            OptionSpec("pki", value: "DIR", help: "start a mock server with the test keys in DIR (scripts/make-test-pki.sh)"),
            OptionSpec("host", value: "HOST", help: "or: send to this server (with --port, --key, --key-id, --team-id)"),
            OptionSpec("port", value: "N", help: "its port"),
            OptionSpec("ca-file", value: "FILE", help: "CA certificates to trust for it"),
            OptionSpec("key", value: "FILE", help: "token key (.p8)"),
            OptionSpec("key-id", value: "ID", help: "key id"),
            OptionSpec("team-id", value: "TEAM", help: "team id"),
            OptionSpec("topic", value: "TOPIC", help: "apns-topic (default com.example.app)"),
            OptionSpec("count", value: "N", help: "notifications to send (default 200000)"),
            OptionSpec("connections", value: "N", help: "connections in the pool (default 1)"),
            OptionSpec("io-threads", value: "N", help: "I/O threads, sharing out the connections (default 1)"),
            OptionSpec("window", value: "N", help: "most notifications outstanding at once (default 10000)"),
            OptionSpec("payload-bytes", value: "N", help: "payload size (default 200)"),
            OptionSpec("h2load", help: "also run h2load against the same mock (needs --pki)"),
        ],
        notes: "The last line is machine-readable: swiftpush-bench rate=... [h2load_rate=... ratio=...] cpu_us_per_notification=... peak_rss_mb=...",
        run: run)

    static let token = "00fc13adff785122b4ad28809a3420982341241421348097878e577c991de8f0"

    static func run(_ args: ParsedArguments) throws(UsageError) -> Int32 {
        let count = try args.integer("count", default: 200_000, in: 1...100_000_000)
        let window = try args.integer("window", default: 10_000, in: 1...1_000_000)
        let payloadBytes = try args.integer("payload-bytes", default: 200, in: 40...4096)
        var c = ClientConfiguration()
        c.connections = try args.integer("connections", default: 1, in: PushOption.connections.intRange)
        c.ioThreads = try args.integer("io-threads", default: 1, in: PushOption.ioThreads.intRange)
        c.queueCapacity = window + 1024
        c.defaultTopic = Array((args.value("topic") ?? "com.example.app").utf8)
        var mock: Process?
        var keyPath: String
        if let pki = args.value("pki") {
            keyPath = pki + "/AuthKey_TESTKEY001.p8"
            c.host = "localhost"
            c.caFile = pki + "/ca.pem"
            c.keyID = "TESTKEY001"
            c.teamID = "TEAM123456"
            let (process, port) = try startMock(pki: pki)
            mock = process
            c.port = port
        } else {
            guard let host = args.value("host") else { throw UsageError("give --pki DIR (a mock of its own) or --host with credentials") }
            if args.has("h2load") { throw UsageError("--h2load compares on a mock of bench's own: use --pki") }
            c.host = host
            c.port = try args.integer("port", default: PushOption.port.defaultInt, in: PushOption.port.intRange)
            c.caFile = args.value("ca-file")
            keyPath = try args.required("key")
            c.keyID = try args.required("key-id")
            c.teamID = try args.required("team-id")
        }
        defer { if let mock { kill(mock.processIdentifier, SIGKILL); mock.waitUntilExit() } }
        do throws(FileBytes.ReadError) {
            c.tokenKey = try FileBytes.readSecret(path: keyPath, limit: 64 * 1024)
        } catch {
            throw UsageError("cannot read \(keyPath): \(error.description)")
        }
        let payload = "{\"aps\":{\"alert\":\"Hello from swiftpush\"},\"pad\":\"" + String(repeating: "x", count: payloadBytes - 47) + "\"}"

        let client: PushClientGroup
        do throws(ClientError) {
            client = try PushClientGroup(configuration: c)
        } catch {
            Console.err("swiftpush bench: \(error.description)")
            return 1
        }
        if let e = client.waitUntilConnected(timeoutMillis: 10_000) {
            Console.err("swiftpush bench: \(e.description)")
            client.close(drainMillis: 0)
            return 1
        }
        let r = measure(client, count: count, window: window, payload: payload)
        let stats = client.stats()
        client.close(drainMillis: 5000)
        let rss = peakRSSMegabytes()
        Console.out("\(count) notifications, \(payloadBytes)-byte payload, \(c.connections) connection(s), \(c.ioThreads) I/O thread(s), window \(window)")
        Console.out("outcomes: \(r.accepted) accepted, \(r.rejected) rejected, \(r.failed) failed")
        Console.out(String(format: "swiftpush: %.0f notifications/s, %.2f CPU-us/notification, %.1f MB peak RSS, latency p50 %lld us, p99 %lld us",
                           r.rate, r.cpuMicros, rss, stats.latency_p50_us, stats.latency_p99_us))
        var line = String(format: "swiftpush-bench rate=%.0f", r.rate)
        if args.has("h2load"), let pki = args.value("pki") {
            if let h2 = runH2load(port: c.port, pki: pki, count: count, payload: payload) {
                Console.out(String(format: "h2load: %.0f requests/s on the same server (ratio %.3f)", h2, r.rate / h2))
                line += String(format: " h2load_rate=%.0f ratio=%.3f", h2, r.rate / h2)
            } else {
                Console.err("swiftpush bench: h2load did not run (install nghttp2-client)")
            }
        }
        line += String(format: " cpu_us_per_notification=%.2f peak_rss_mb=%.1f", r.cpuMicros, rss)
        Console.out(line)
        return r.accepted == count ? 0 : 1
    }

    struct Measurement { var accepted = 0, rejected = 0, failed = 0, rate = 0.0, cpuMicros = 0.0 }

    /// Keeps up to `window` notifications outstanding until `count` have results; a progress
    /// line on stderr (when it is a terminal) twice a second.
    static func measure(_ client: PushClientGroup, count: Int, window: Int, payload: String) -> Measurement {
        var m = Measurement()
        let progress = isatty(2) != 0
        let start = MonotonicTime.nanos(), cpuStart = cpuSeconds()
        var lastReport = start
        token.withCString { tokenPtr in
            payload.withCString { payloadPtr in
                var batch = [push_notification](repeating: push_notification(), count: 512)
                for i in 0..<batch.count {
                    batch[i].device_token = tokenPtr
                    batch[i].payload = payloadPtr
                }
                var results = [push_result](repeating: push_result(), count: 1024)
                var sent = 0, done = 0
                while done < count {
                    let room = min(window - (sent - done), count - sent, batch.count)
                    if room > 0 {
                        for i in 0..<room { batch[i].tag = UInt64(sent + i) }
                        sent += batch.withUnsafeBufferPointer { client.send($0.baseAddress!, count: room, timeoutMillis: 0).accepted }
                    }
                    let got = results.withUnsafeMutableBytes {
                        client.poll(into: $0.baseAddress!, max: 1024, recordSize: MemoryLayout<push_result>.stride,
                                    timeoutMillis: sent - done >= window || sent == count ? 100 : 0)
                    }
                    for r in results.prefix(got.count) {
                        switch r.outcome { case 1: m.accepted += 1; case 2: m.rejected += 1; default: m.failed += 1 }
                    }
                    done += got.count
                    if got.allDelivered { break }
                    let now = MonotonicTime.nanos()
                    if progress && now - lastReport > 500_000_000 {
                        let rate = Double(done) / (Double(now - start) / 1e9)
                        Console.err(String(format: "\u{1B}[1A\r  %d/%d done, %.0f/s          ", done, count, rate))
                        lastReport = now
                    }
                }
            }
        }
        let seconds = Double(MonotonicTime.nanos() - start) / 1e9
        let total = m.accepted + m.rejected + m.failed
        m.rate = Double(total) / seconds
        m.cpuMicros = (cpuSeconds() - cpuStart) * 1e6 / Double(max(total, 1))
        return m
    }

    /// Starts `swiftpush mock` (this same executable) with the test keys; returns it and its port.
    static func startMock(pki: String) throws(UsageError) -> (Process, Int) {
        let portFile = NSTemporaryDirectory() + "swiftpush-bench-\(getpid()).port"
        unlink(portFile)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        p.arguments = ["mock", "--cert", pki + "/server.pem", "--key", pki + "/server.key", "--port", "0",
                       "--key-id", "TESTKEY001", "--team-id", "TEAM123456", "--auth-key", pki + "/AuthKey_TESTKEY001.pub.pem",
                       "--port-file", portFile, "--lenient-initial-limit"]
        p.standardOutput = FileHandle.nullDevice
        do { try p.run() } catch { throw UsageError("cannot start the mock server: \(error)") }
        for _ in 0..<200 {
            if let text = try? String(contentsOfFile: portFile, encoding: .utf8),
               let port = Int(text.trimmingCharacters(in: .whitespacesAndNewlines)) {
                unlink(portFile)
                return (p, port)
            }
            usleep(50_000)
        }
        kill(p.processIdentifier, SIGKILL)
        throw UsageError("the mock server did not start (is \(pki) a test PKI from scripts/make-test-pki.sh?)")
    }

    /// Runs h2load with the same request (1 connection, 1000 streams); its requests/s.
    static func runH2load(port: Int, pki: String, count: Int, payload: String) -> Double? {
        guard let key = try? SigningKey(path: pki + "/AuthKey_TESTKEY001.p8"),
              let jwt = try? ProviderToken(key: key, keyID: "TESTKEY001", teamID: "TEAM123456", clock: SystemClock.shared) else { return nil }
        let body = NSTemporaryDirectory() + "swiftpush-bench-\(getpid()).json"
        guard FileManager.default.createFile(atPath: body, contents: Data(payload.utf8)) else { return nil }
        defer { unlink(body) }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/h2load")
        p.arguments = ["-n", String(count), "-c", "1", "-m", "1000", "-t", "1",
                       "-H", "apns-topic: com.example.app", "-H", "apns-push-type: alert", "-H", "apns-priority: 10",
                       "-H", "authorization: " + String(decoding: jwt.headerValue, as: UTF8.self), "-d", body,
                       "https://127.0.0.1:\(port)/3/device/\(token)"]
        let pipe = Pipe()
        p.standardOutput = pipe
        p.standardError = FileHandle.nullDevice
        guard (try? p.run()) != nil else { return nil }
        let out = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        guard let range = out.range(of: #"[0-9.]+ req/s"#, options: .regularExpression) else { return nil }
        return Double(out[range].split(separator: " ")[0])
    }

    static func cpuSeconds() -> Double {
        var u = rusage()
        getrusage(RUSAGE_SELF.rawValue, &u)
        return Double(u.ru_utime.tv_sec) + Double(u.ru_utime.tv_usec) / 1e6 + Double(u.ru_stime.tv_sec) + Double(u.ru_stime.tv_usec) / 1e6
    }

    static func peakRSSMegabytes() -> Double {
        var u = rusage()
        getrusage(RUSAGE_SELF.rawValue, &u)
        return Double(u.ru_maxrss) / 1024
    }
}
