#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ArgumentParser
import Logging
import PushCore
import PushCrypto
import PushClientCore
import SwiftPushKit

/// `swiftpush bench`: sends many notifications through the library as fast as it takes them
/// (the Swift API's `APNsEngine`, as a host that owns a thread drives it) and reports the rate, client CPU per notification, peak RSS and latency, with a live progress
/// line. With `--pki DIR` it starts a mock server of its own (a separate process, so the CPU
/// figures are the client's alone) and, with `--h2load`, runs nghttp2's h2load against the same
/// server with the same request for a side-by-side ratio. `make bench` is the full protocol
/// (pinned CPUs, medians of several runs); this is the quick, interactive version.
struct BenchCommand: StatusCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measure sending throughput, optionally against h2load on the same mock server.",
        usage: "swiftpush bench --pki DIR [options]\nswiftpush bench --host HOST --key FILE --key-id ID --team-id TEAM [options]",
        discussion: """
        The last line is machine-readable:
          swiftpush-bench rate=... [h2load_rate=... ratio=...]
            cpu_us_per_notification=... peak_rss_mb=...
        """)

    @Option(help: ArgumentHelp("start a mock server with the test keys in DIR (scripts/make-test-pki.sh)", valueName: "DIR"),
            completion: .directory)
    var pki: String?
    @OptionGroup(title: "Connection options (or: send to this server, instead of --pki)")
    var connection: ConnectionOptions
    @Option(help: ArgumentHelp("apns-topic (default com.example.app)", valueName: "TOPIC"))
    var topic: String?
    @Option(help: ArgumentHelp("notifications to send (default 200000)", valueName: "N"))
    var count: Int?
    @Option(help: ArgumentHelp("connections in the pool (default 1)", valueName: "N"))
    var connections: Int?
    @Option(help: ArgumentHelp("I/O threads, sharing out the connections (default 1)", valueName: "N"))
    var ioThreads: Int?
    @Option(help: ArgumentHelp("most notifications outstanding at once (default 10000)", valueName: "N"))
    var window: Int?
    @Option(help: ArgumentHelp("payload size (default 200)", valueName: "N"))
    var payloadBytes: Int?
    @Flag(help: "also run h2load against the same mock (needs --pki)")
    var h2load = false

    static let token = "00fc13adff785122b4ad28809a3420982341241421348097878e577c991de8f0"

    func validate() throws(ValidationError) {
        try checkRange(count, "count", 1...100_000_000)
        try checkRange(window, "window", 1...1_000_000)
        try checkRange(payloadBytes, "payload-bytes", 40...4096)
        try checkRange(connections, "connections", PushOption.connections.intRange)
        try checkRange(ioThreads, "io-threads", PushOption.ioThreads.intRange)
        if pki == nil {
            guard connection.host != nil else { throw ValidationError("give --pki DIR (a mock of its own) or --host with credentials") }
            if h2load { throw ValidationError("--h2load compares on a mock of bench's own: use --pki") }
        }
    }

    func execute() throws(ValidationError) -> Int32 {
        let count = self.count ?? 200_000
        let window = self.window ?? 10_000
        let payloadBytes = self.payloadBytes ?? 200
        var mock: SpawnedProcess?
        var configuration: APNsConfiguration
        if let pki {
            guard connection.isEmpty else { throw ValidationError("--pki starts a mock of its own: no connection options with it") }
            var values = APNsOptionValues()
            values.text = [.host: "localhost", .caFile: pki + "/ca.pem", .tokenKeyFile: pki + "/AuthKey_TESTKEY001.p8",
                           .keyID: "TESTKEY001", .teamID: "TEAM123456"]
            let (process, port) = try Self.startMock(pki: pki)
            mock = process
            values.numbers[.port] = port
            configuration = try connection.configuration(adding: values)
        } else {
            configuration = try connection.configuration()
        }
        defer { mock?.kill() }
        configuration.pool.connections = connections ?? 1
        configuration.pool.ioThreads = ioThreads ?? 1
        configuration.pool.queueCapacity = window + 1024
        configuration.defaultTopic = topic ?? "com.example.app"
        let payload = "{\"aps\":{\"alert\":\"Hello from swiftpush\"},\"pad\":\"" + String(repeating: "x", count: payloadBytes - 47) + "\"}"

        let engine: APNsEngine
        do throws(PushError) {
            engine = try APNsEngine(configuration: configuration, logger: Logger(label: "swiftpush", factory: { _ in SwiftLogNoOpLogHandler() }))
            try engine.waitUntilConnected(timeout: .seconds(10))
        } catch {
            Console.err("swiftpush bench: \(error.message)")
            return 1
        }
        let r = Self.measure(engine, count: count, window: window, payload: payload)
        let stats = engine.stats()
        engine.close(drain: .seconds(5))
        let rss = Self.peakRSSMegabytes()
        Console.out("\(count) notifications, \(payloadBytes)-byte payload, \(configuration.pool.connections) connection(s), \(configuration.pool.ioThreads) I/O thread(s), window \(window)")
        Console.out("outcomes: \(r.accepted) accepted, \(r.rejected) rejected, \(r.failed) failed")
        Console.out(String(format: "swiftpush: %.0f notifications/s, %.2f CPU-us/notification, %.1f MB peak RSS, latency p50 %lld us, p99 %lld us",
                           r.rate, r.cpuMicros, rss, Int64(stats.latencyP50 / .microseconds(1)), Int64(stats.latencyP99 / .microseconds(1))))
        var line = String(format: "swiftpush-bench rate=%.0f", r.rate)
        if h2load, let pki {
            if let h2 = Self.runH2load(port: configuration.environment.port, pki: pki, count: count, payload: payload) {
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

    /// Keeps up to `window` notifications outstanding until `count` have results, submitting
    /// without waiting and taking results on this thread (`APNsEngine`); a progress line on
    /// stderr when it is a terminal.
    static func measure(_ engine: APNsEngine, count: Int, window: Int, payload: String) -> Measurement {
        var m = Measurement()
        var progress = ProgressLine(total: count, quiet: false, threshold: 0)
        let start = MonotonicTime.nanos(), cpuStart = cpuSeconds()
        // One payload shared by every notification (its bytes are copied once, into each slot).
        let note = PushNotification(deviceToken: token, payload: PushPayload(json: payload))
        var batch = [TaggedNotification](repeating: TaggedNotification(tag: 0, notification: note), count: 512)
        var results: [TaggedResult] = []
        results.reserveCapacity(1024)
        var sent = 0, done = 0
        while done < count {
            let room = min(window - (sent - done), count - sent, batch.count)
            if room > 0 {
                for i in 0..<room { batch[i].tag = UInt64(sent + i) }
                sent += engine.submit(batch[..<room]).accepted
            }
            let take = engine.take(into: &results, max: 1024, timeout: sent - done >= window || sent == count ? .milliseconds(100) : .zero)
            if take == .finished { break }
            for r in results {
                switch r.result.outcome { case .accepted: m.accepted += 1; case .rejected: m.rejected += 1; case .failed: m.failed += 1 }
            }
            done += results.count
            results.removeAll(keepingCapacity: true)
            progress.update(done: done)
        }
        progress.finish(done: done)
        let seconds = Double(MonotonicTime.nanos() - start) / 1e9
        let total = m.accepted + m.rejected + m.failed
        m.rate = Double(total) / seconds
        m.cpuMicros = (cpuSeconds() - cpuStart) * 1e6 / Double(max(total, 1))
        return m
    }

    /// Starts `swiftpush mock` (this same executable) with the test keys; returns it and its port.
    static func startMock(pki: String) throws(ValidationError) -> (SpawnedProcess, Int) {
        let portFile = NSTemporaryDirectory() + "swiftpush-bench-\(getpid()).port"
        unlink(portFile)
        let arguments = ["mock", "--cert", pki + "/server.pem", "--key", pki + "/server.key", "--port", "0",
                       "--key-id", "TESTKEY001", "--team-id", "TEAM123456", "--auth-key", pki + "/AuthKey_TESTKEY001.pub.pem",
                       "--port-file", portFile, "--lenient-initial-limit"]
        let p: SpawnedProcess
        do { p = try SpawnedProcess(URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path, arguments, passErrors: true) } catch {
            throw ValidationError("cannot start the mock server: \(error)")
        }
        for _ in 0..<200 where p.isRunning {
            if let text = try? String(contentsOfFile: portFile, encoding: .utf8),
               let port = Int(text.trimmingCharacters(in: .whitespacesAndNewlines)) {
                unlink(portFile)
                return (p, port)
            }
            usleep(50_000)
        }
        p.kill()
        throw ValidationError("the mock server did not start (is \(pki) a test PKI from scripts/make-test-pki.sh?)")
    }

    /// Runs h2load with the same request (1 connection, 1000 streams); its requests/s.
    static func runH2load(port: Int, pki: String, count: Int, payload: String) -> Double? {
        guard let key = try? SigningKey(path: pki + "/AuthKey_TESTKEY001.p8"),
              let jwt = try? ProviderToken(key: key, keyID: "TESTKEY001", teamID: "TEAM123456", clock: SystemClock.shared) else { return nil }
        let body = NSTemporaryDirectory() + "swiftpush-bench-\(getpid()).json"
        guard FileManager.default.createFile(atPath: body, contents: Data(payload.utf8)) else { return nil }
        defer { unlink(body) }
        let output = NSTemporaryDirectory() + "swiftpush-bench-\(getpid()).h2load"
        defer { unlink(output) }
        let arguments = ["-n", String(count), "-c", "1", "-m", "1000", "-t", "1",
                       "-H", "apns-topic: com.example.app", "-H", "apns-push-type: alert", "-H", "apns-priority: 10",
                       "-H", "authorization: " + String(decoding: jwt.headerValue, as: UTF8.self), "-d", body,
                       "https://127.0.0.1:\(port)/3/device/\(token)"]
        // Output to a file, read once h2load has ended: a pipe read to its end would wait as
        // long as anything holds the pipe open. At most 10 minutes (then it is killed).
        guard let p = try? SpawnedProcess("/usr/bin/h2load", arguments, stdout: output), p.wait(seconds: 600) == 0,
              let out = try? String(contentsOfFile: output, encoding: .utf8) else { return nil }
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
