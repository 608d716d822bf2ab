#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Logging
import Synchronization
import SwiftPushKit

// swiftpushkit-bench: load.c's workload (Bindings/c/examples/load.c) through the Swift API, for
// the Swift rows of `make bench` (scripts/bench.sh). Three ways in:
//   --mode engine   APNsEngine from this thread: batches of 512 tagged notifications submitted
//                   without waiting, results taken with a timeout, --window outstanding (load.c's
//                   loop, in Swift values)
//   --mode batch    APNsClient.send(contentsOf:) of --count notifications, results iterated as
//                   they come
//   --mode tasks    --tasks tasks (default 1000), each awaiting APNsClient.send one at a time
//   --mode tasks-executor   the same tasks in a group under the client's task executor
//                   (withTaskExecutorPreference(client.taskExecutor))
//
//   swiftpushkit-bench --host localhost --port 2197 --ca ca.pem --key AuthKey.p8 [--key-id ID]
//       [--team-id TEAM] [--topic T] [--count N] [--window W] [--connections C]
//       [--payload-bytes B] [--token HEX] [--mode engine|batch|tasks|tasks-executor] [--tasks N]
//
// Last line (machine-readable, load.c's fields):
//   load-result sent=N accepted=N rejected=N failed=N seconds=S rate=R cpu_us_per_notification=C peak_rss_mb=M

/// The value after `name` on the command line, or `fallback`.
func argument(_ name: String, _ fallback: String) -> String {
    let args = CommandLine.arguments
    guard let i = args.firstIndex(of: name), i + 1 < args.count else { return fallback }
    return args[i + 1]
}

func cpuSeconds() -> Double {
    var u = rusage()
    getrusage(RUSAGE_SELF.rawValue, &u)
    return Double(u.ru_utime.tv_sec) + Double(u.ru_utime.tv_usec) / 1e6 + Double(u.ru_stime.tv_sec) + Double(u.ru_stime.tv_usec) / 1e6
}

func peakRSSMegabytes() -> Double {
    var u = rusage()
    getrusage(RUSAGE_SELF.rawValue, &u)
    return Double(u.ru_maxrss) / 1024
}

/// Outcomes by kind.
struct Tally {
    var accepted = 0, rejected = 0, failed = 0
    var total: Int { accepted + rejected + failed }

    mutating func add(_ outcome: PushOutcome) {
        switch outcome {
        case .accepted: accepted += 1
        case .rejected: rejected += 1
        case .failed: failed += 1
        }
    }
}

let count = Int(argument("--count", "100000"))!
let window = Int(argument("--window", "10000"))!
let payloadBytes = Int(argument("--payload-bytes", "200"))!
let mode = argument("--mode", "engine")
let tasks = Int(argument("--tasks", "1000"))!
guard argument("--key", "") != "", count > 0, window > 0, ["engine", "batch", "tasks", "tasks-executor"].contains(mode) else {
    print("usage: swiftpushkit-bench --key AuthKey.p8 [--host H --port P --ca ca.pem --key-id ID --team-id T --topic T "
          + "--count N --window W --connections C --payload-bytes B --token HEX --mode engine|batch|tasks|tasks-executor --tasks N]")
    exit(2)
}

let configuration: APNsConfiguration = {
    var c = APNsConfiguration(
        environment: .custom(host: argument("--host", "localhost"), port: Int(argument("--port", "2197"))!),
        credentials: .tokenKey(file: argument("--key", ""), keyID: argument("--key-id", "TESTKEY001"), teamID: argument("--team-id", "TEAM123456")),
        defaultTopic: argument("--topic", "com.example.app"))
    let ca = argument("--ca", "")
    c.caFile = ca.isEmpty ? nil : ca
    c.pool.connections = Int(argument("--connections", "1"))!
    c.pool.queueCapacity = max(16, window + 512)
    return c
}()

// load.c's payload: an alert plus padding in a custom key, of the requested size.
let head = #"{"aps":{"alert":"Hello from swiftpush"},"pad":""#
let payload = PushPayload(json: head + String(repeating: "x", count: max(0, payloadBytes - head.utf8.count - 2)) + #""}"#)
let token = argument("--token", "b6f1f6a2c3d4e5f60718293a4b5c6d7e8f90112233445566778899aabbccddee")
// Every notification shares the token's and the payload's bytes (multicast).
let note = PushNotification(deviceToken: token, payload: payload)
/// Warnings and errors on stderr: stdout holds the result line alone.
let logger: Logger = {
    var l = Logger(label: "swiftpushkit-bench", factory: { StreamLogHandler.standardError(label: $0) })
    l.logLevel = .warning
    return l
}()

/// load.c's loop through the host-thread interface.
func runEngine() throws(PushError) -> (Tally, Double) {
    let engine = try APNsEngine(configuration: configuration, logger: logger)
    try engine.waitUntilConnected(timeout: .seconds(10))
    var batch = (0..<512).map { TaggedNotification(tag: UInt64($0), notification: note) }
    var results: [TaggedResult] = []
    results.reserveCapacity(1024)
    var tally = Tally()
    var sent = 0
    let start = ContinuousClock.now
    while tally.total < count {
        let room = min(window - (sent - tally.total), count - sent, batch.count)
        if room > 0 {
            for i in 0..<room { batch[i].tag = UInt64(sent + i) }
            sent += engine.submit(batch[0..<room]).accepted
        }
        let wait: Duration = sent - tally.total >= window || sent == count ? .milliseconds(100) : .zero
        if engine.take(into: &results, max: 1024, timeout: wait) == .finished { break }
        for r in results { tally.add(r.result.outcome) }
        results.removeAll(keepingCapacity: true)
    }
    let seconds = (ContinuousClock.now - start) / .seconds(1)
    engine.close(drain: .seconds(5))
    return (tally, seconds)
}

/// `waitUntilConnected` with this program's typed error: it throws `PushError`, or
/// `CancellationError` for a cancelled task, and nothing here cancels its tasks.
func connected(_ client: APNsClient) async throws(PushError) {
    do {
        try await client.waitUntilConnected()
    } catch let error as PushError {
        throw error
    } catch {
        throw PushError(.internalError, "waitUntilConnected: \(error)")
    }
}

/// The async batch path.
func runBatch() async throws(PushError) -> (Tally, Double) {
    let client = try APNsClient(configuration: configuration, logger: logger)
    try await connected(client)
    let notifications = [PushNotification](repeating: note, count: count)
    // Counted in a shared tally, not a struct returned from the loop (docs/toolchain.md).
    let counts = SharedTally()
    let start = ContinuousClock.now
    for await r in client.send(contentsOf: notifications) {
        switch r.result {
        case .success(let result): counts.add(result.outcome)
        case .failure: counts.failed.add(1, ordering: .relaxed)
        }
    }
    let seconds = (ContinuousClock.now - start) / .seconds(1)
    await client.shutdown()
    return (counts.tally, seconds)
}

/// Outcomes counted by many tasks.
final class SharedTally: Sendable {
    let accepted = Atomic<Int>(0), rejected = Atomic<Int>(0), failed = Atomic<Int>(0)

    func add(_ outcome: PushOutcome) {
        switch outcome {
        case .accepted: accepted.add(1, ordering: .relaxed)
        case .rejected: rejected.add(1, ordering: .relaxed)
        case .failed: failed.add(1, ordering: .relaxed)
        }
    }

    /// The counts so far.
    var tally: Tally {
        var t = Tally()
        t.accepted = accepted.load(ordering: .relaxed)
        t.rejected = rejected.load(ordering: .relaxed)
        t.failed = failed.load(ordering: .relaxed)
        return t
    }
}

/// One notification at a time per task, `tasks` tasks; on the client's task executor when
/// `onExecutor`.
func runTasks(onExecutor: Bool) async throws(PushError) -> (Tally, Double) {
    let client = try APNsClient(configuration: configuration, logger: logger)
    try await connected(client)
    let start = ContinuousClock.now
    // The tasks count into shared atomics and return nothing: a child that returns a struct it
    // built field by field in its loop can come back with fields never written (docs/toolchain.md).
    let counts = SharedTally()
    await withTaskExecutorPreference(onExecutor ? client.taskExecutor : nil) {
        await withTaskGroup(of: Void.self) { group in
            for t in 0..<tasks {
                group.addTask {
                    for _ in stride(from: t, to: count, by: tasks) {
                        do {
                            counts.add(try await client.send(note).outcome)
                        } catch {
                            counts.failed.add(1, ordering: .relaxed)
                        }
                    }
                }
            }
        }
    }
    let tally = counts.tally
    let seconds = (ContinuousClock.now - start) / .seconds(1)
    await client.shutdown()
    return (tally, seconds)
}

/// The async modes' outcome, handed to the main thread: written before `done` is signalled,
/// read after it was waited for.
final class Outcome: @unchecked Sendable {
    var value: Result<(Tally, Double), PushError>?
    let done = DispatchSemaphore(value: 0)
}

/// The measurement: `runEngine` on this thread (the host-thread interface is for threads of
/// the host's, not async contexts), the async modes in a task this thread waits for.
func measure() -> Result<(Tally, Double), PushError> {
    if mode == "engine" {
        do throws(PushError) { return .success(try runEngine()) } catch { return .failure(error) }
    }
    let outcome = Outcome()
    Task {
        do throws(PushError) {
            outcome.value = .success(mode == "batch" ? try await runBatch() : try await runTasks(onExecutor: mode == "tasks-executor"))
        } catch {
            outcome.value = .failure(error)
        }
        outcome.done.signal()
    }
    outcome.done.wait()
    return outcome.value!
}

/// `value` with `places` decimals (without Foundation's String(format:)).
func decimal(_ value: Double, _ places: Int) -> String {
    var scale = 1.0
    for _ in 0..<places { scale *= 10 }
    return String(Double(Int((value * scale).rounded())) / scale)
}

let cpuStart = cpuSeconds()
switch measure() {
case .success(let (tally, seconds)):
    let cpu = (cpuSeconds() - cpuStart) * 1e6 / Double(max(tally.total, 1))
    print("load-result sent=\(tally.total) accepted=\(tally.accepted) rejected=\(tally.rejected) failed=\(tally.failed) "
          + "seconds=\(decimal(seconds, 3)) rate=\(Int(Double(tally.total) / seconds)) "
          + "cpu_us_per_notification=\(decimal(cpu, 2)) peak_rss_mb=\(decimal(peakRSSMegabytes(), 1)) mode=\(mode)")
    exit(tally.accepted == count ? 0 : 1)
case .failure(let error):
    print("swiftpushkit-bench: \(error.message)")
    exit(1)
}
