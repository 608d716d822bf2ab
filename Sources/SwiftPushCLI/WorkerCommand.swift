#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import Foundation
import SwiftPushRedis
import SwiftPushStatus
import SwiftPushWorker
import SwiftPushWorkerHTTP
import SwiftPushKeys

/// `swiftpush worker`: runs a queue-fed sender until SIGTERM or SIGINT, then drains and exits.
struct WorkerCommand: StatusCommand {
    static let configuration = CommandConfiguration(
        commandName: "worker",
        abstract: "Send notifications from a Redis stream; record one outcome per notification.",
        usage: "swiftpush worker --config FILE [--consumer NAME] [--quiet]\n       swiftpush worker --check-config FILE",
        discussion: """
        Reads push:{shard} of each shard it serves ("shard" or "shards"; on a
        Redis Cluster from the master of the shard's slot) with the consumer group,
        sends through one client per app, records each outcome in
        outcomes:{shard} (410 tokens also in unregistered:{shard}) and
        acknowledges it in the same Lua script.
        SIGTERM/SIGINT: stop reading, finish what it holds or has to take back
        (drain_ms), settle, exit 0; what cannot finish is handed back, at once
        reclaimable by any worker (handed_back=N in the log).
        Unknown keys are refused, with the nearest known name. --check-config
        FILE checks a configuration (keys, values, key and certificate files,
        the Redis password source) without connecting to Redis or APNs: exit 0
        when it is valid, 2 with the reason.
        Exit status: 0 stopped with nothing left unsettled, 1 something stayed
        pending (handed back), 2 usage or configuration error.
        """)

    @Option(help: ArgumentHelp("the worker's JSON configuration (docs/worker.md)", valueName: "FILE"), completion: .file())
    var config: String?
    @Option(help: ArgumentHelp("check this configuration without connecting: exit 0 if valid, 2 with the reason", valueName: "FILE"),
            completion: .file())
    var checkConfig: String?
    @Option(help: ArgumentHelp("this worker's consumer name (overrides the file; keep it stable across restarts)", valueName: "NAME"))
    var consumer: String?
    @Flag(help: "log errors only")
    var quiet = false

    func validate() throws(ValidationError) {
        if (config == nil) == (checkConfig == nil) { throw ValidationError("give --config FILE (run) or --check-config FILE (check only)") }
    }

    func execute() throws(ValidationError) -> Int32 {
        if let checkConfig { return try Self.check(path: checkConfig) }
        var config: WorkerConfiguration
        let path = self.config ?? ""
        do throws(ConfigurationError) {
            config = try WorkerConfiguration.load(path: path)
        } catch {
            throw ValidationError(error.description)
        }
        if let consumer { config.consumer = consumer }
        let consumerName = config.consumer ?? Self.defaultConsumerName()
        let connector: RedisConnector
        do throws(RedisError) {
            connector = try RedisConnector(config.redis)
        } catch {
            throw ValidationError(error.description)
        }

        // Block the stop signals before any client thread exists, so that every thread inherits
        // the mask and only the sigwait thread below sees them: no async signal handler.
        var stopSignals = sigset_t()
        sigemptyset(&stopSignals)
        sigaddset(&stopSignals, SIGINT)
        sigaddset(&stopSignals, SIGTERM)
        pthread_sigmask(SIG_BLOCK, &stopSignals, nil)

        let log = WorkerLog(verbose: !quiet)
        let worker: WorkerDriver
        do throws(ConfigurationError) {
            worker = try WorkerDriver(configuration: config, connector: connector, consumer: consumerName, log: log)
        } catch {
            throw ValidationError(error.description)
        }
        if let port = config.metricsPort {
            do throws(ConfigurationError) {
                let server = try WorkerHTTPServer(host: config.metricsHost, port: port,
                                                  routes: Self.routes(worker: worker, config: config, consumer: consumerName))
                let base = "http://\(config.metricsHost):\(server.port)"
                log.started("serving HTTP", ["metrics": base + "/metrics", "healthz": base + "/healthz", "status_page": base + "/"])
            } catch {
                throw ValidationError(error.description)
            }
        }
        let box = Unmanaged.passRetained(StopTarget(worker: worker, signals: stopSignals)).toOpaque()
        var thread = pthread_t()
        pthread_create(&thread, nil, { arg in
            let target = Unmanaged<StopTarget>.fromOpaque(arg!).takeRetainedValue()
            var set = target.signals
            var signal: Int32 = 0
            sigwait(&set, &signal)
            target.worker.requestStop()
            return nil
        }, box)
        pthread_detach(thread)
        let streams = config.shards.map { StreamKeys(shard: $0).stream }.joined(separator: ",")
        var fields = ["consumer": consumerName, "streams": streams, "redis": config.redis.summary,
                      "min_idle_ms": String(config.effectiveMinIdleMillis)]
        if config.redis.waitReplicas > 0 { fields["wait_replicas"] = String(config.redis.waitReplicas) }
        log.started("worker started", fields)
        return worker.run() ? 0 : 1
    }

    /// `--check-config`: everything the worker checks before it connects (the file's keys and
    /// values, each app's client configuration with its files read and key loaded, the Redis
    /// password source and TLS files), connecting to nothing. Prints one line when valid.
    static func check(path: String) throws(ValidationError) -> Int32 {
        let config: WorkerConfiguration
        do throws(ConfigurationError) {
            config = try WorkerConfiguration.load(path: path)
            try config.validateWithoutConnecting()
        } catch {
            throw ValidationError(error.description.hasPrefix(path) ? error.description : "\(path): \(error.description)")
        }
        do throws(RedisError) {
            _ = try RedisConnector(config.redis)
        } catch {
            throw ValidationError("\(path): \(error.description)")
        }
        Console.out("\(path): valid (\(config.apps.count) app\(config.apps.count == 1 ? "" : "s"), shards \(config.shards.joined(separator: ", ")), Redis at \(config.redis.summary))")
        return 0
    }

    /// What the HTTP server serves: the worker's metrics, and the fleet's status read from the
    /// worker's Redis (its `"redis"` object: a server or a cluster, AUTH, TLS) on connections of
    /// the page's own (every shard found there, this one
    /// first), with this worker's own figures beside it.
    static func routes(worker: WorkerDriver, config: WorkerConfiguration, consumer: String) -> WorkerRoutes {
        let redis = config.redis
        let reader = StatusReader(group: config.group, shards: .discovered(including: config.shards, rescanMillis: 60_000),
                                  clockOffsetMillis: Self.statusClockOffset()) {
            try RedisRouter(redis)
        }
        let metrics = worker.metrics
        let shards = config.shards
        return WorkerRoutes(metrics: metrics, feed: StatusFeed(reader: reader)) {
            let m = metrics.snapshot()
            return LocalWorkerStatus(
                consumer: consumer, shards: shards, live: metrics.isLive(withinMillis: 10_000),
                outcomes: m.outcomes.map { .init(app: $0.app, outcome: $0.outcome, reason: $0.reason, count: $0.count) },
                counters: m.counters, gauges: m.gauges)
        }
    }

    /// The status page's clock offset for tests (Tests/status/run.sh): with
    /// `SWIFTPUSH_STATUS_CLOCK_OFFSET_FILE` set, the milliseconds that file holds are added to
    /// Redis's time at each status read, so a test moves the clock past the rate's window (a
    /// pause in the reads, the chart's gap) instead of waiting for it. Unset: always 0.
    static func statusClockOffset() -> () -> Int {
        guard let path = ProcessInfo.processInfo.environment["SWIFTPUSH_STATUS_CLOCK_OFFSET_FILE"], !path.isEmpty else { return { 0 } }
        return {
            guard let data = FileManager.default.contents(atPath: path) else { return 0 }
            return Int(String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        }
    }

    /// Host name plus "-1": stable across restarts on the same machine.
    static func defaultConsumerName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        gethostname(&buffer, 255)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) + "-1"
    }
}

/// What the signal thread needs (passed to it through pthread_create's argument).
private final class StopTarget {
    let worker: WorkerDriver
    let signals: sigset_t
    init(worker: WorkerDriver, signals: sigset_t) {
        self.worker = worker
        self.signals = signals
    }
}
