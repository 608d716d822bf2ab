#if canImport(Glibc)
import Glibc
#endif
import CSwiftPushABI
import PushClientCore
import PushCore
import PushTransport
import SwiftPushRedis

/// The thin I/O layer under a shard's `ShardMachine`: it owns the thread, the shard's two Redis
/// connections (`RedisLane`: reads, claims and the rest on one, settles on the other) and the
/// apps' clients, waits on all of them in one `poll`, turns what happened into the machine's
/// events and carries out its actions. No rule of the protocol lives here (docs/worker.md).
///
/// Threads: `run` owns everything on the calling thread; the clients' I/O threads only publish
/// results; `requestStop` may be called from any thread (the signal thread).
public final class WorkerDriver {
    let configuration: WorkerConfiguration
    let connector: RedisConnector
    let commands: RedisShardCommands
    let log: WorkerLog
    let clients: AppClients
    let events: APNsEventLog
    /// What `/metrics` shows (published a few times a second).
    public let metrics = WorkerMetrics()
    private(set) var machine: ShardMachine
    private let main: RedisLane
    private let settle: RedisLane
    /// A pipe: `requestStop` writes its second end, the loop polls its first.
    private let stopPipe: (read: Int32, write: Int32)
    private var resultFDs: [(app: String, fd: Int32)] = []
    private var goawaysSeen: [String: UInt64] = [:]
    private var nextPublishNanos: UInt64 = 0
    private var nextHeartbeatNanos: UInt64 = 0
    private let startedMillis: Int64
    private var finished = false
    private var fatalMessage: String?

    /// A driver for `configuration`'s shard on `connector`, as consumer `commands.consumer`: the
    /// apps' clients are opened here (a credential set that cannot be used fails now).
    public init(configuration: WorkerConfiguration, connector: RedisConnector, commands: RedisShardCommands,
                log: WorkerLog = WorkerLog()) throws(ConfigurationError) {
        self.configuration = configuration
        self.connector = connector
        self.commands = commands
        self.log = log
        events = APNsEventLog(log: log)
        clients = try AppClients(configuration: configuration, events: events)
        machine = ShardMachine(settings: configuration.machineSettings, apps: clients.policies,
                               seed: UInt64(truncatingIfNeeded: MonotonicTime.nanos()))
        main = RedisLane(commands: commands)
        settle = RedisLane(commands: commands)
        var ends: [Int32] = [-1, -1]
        if pipe(&ends) != 0 { throw ConfigurationError("cannot make a pipe: errno \(errno)") }
        for fd in ends {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        stopPipe = (ends[0], ends[1])
        startedMillis = Self.wallMillis()
        metrics.showClients(clients.clients)
        metrics.showEvents(events)
        for (app, client) in clients.clients.sorted(by: { $0.key < $1.key }) {
            do throws(ClientError) {
                resultFDs.append((app, try client.resultFileDescriptor()))
            } catch {
                throw ConfigurationError("app \"\(app)\": \(error.description)")
            }
        }
    }

    deinit {
        Glibc.close(stopPipe.read)
        Glibc.close(stopPipe.write)
    }

    /// Asks `run` to stop reading, finish what is in flight (up to `drain_ms`), settle and
    /// return. Safe from any thread (also from a signal thread).
    public func requestStop() {
        var one: UInt8 = 1
        _ = write(stopPipe.write, &one, 1)
    }

    /// What the machine did (read after `run`).
    public var counters: ShardMachine.Counters { machine.counters }

    /// Runs until a stop is requested and everything taken is settled (or the drain time is
    /// over). Returns true when nothing it took was left pending.
    public func run() -> Bool {
        // hiredis writes on this thread: a Redis that vanishes must give EPIPE (a lost
        // connection, reconnected), not SIGPIPE's default action of killing the process.
        IOThread.blockSIGPIPE()
        var pending: [WorkerEvent] = [.tick]
        while !finished {
            while !pending.isEmpty && !finished {
                let event = pending.removeFirst()
                pending.insert(contentsOf: perform(machine.handle(event, at: Self.now())), at: 0)
            }
            if finished { break }
            publishIfDue()
            pending = waitForEvents()
        }
        clients.close(drainMillis: 0)
        dropHeartbeat()
        main.close()
        settle.close()
        nextPublishNanos = 0
        publishIfDue()
        log.info("stopped", counterFields())
        if let fatalMessage {
            log.error("stopped: \(fatalMessage)", [:])
            return false
        }
        return machine.counters.leftPending == 0
    }

    // MARK: - Waiting

    /// Waits (at most until the machine's next wake, and a fifth of a second for the metrics)
    /// for a stop, replies from Redis or results; returns them as events (a tick when none).
    private func waitForEvents() -> [WorkerEvent] {
        let now = MonotonicTime.nanos()
        var timeoutMillis = 200
        if let wake = machine.nextWakeNanos() {
            timeoutMillis = wake <= now ? 0 : min(timeoutMillis, Int((wake - now + 999_999) / 1_000_000))
        }
        var fds = [pollfd(fd: stopPipe.read, events: Int16(POLLIN), revents: 0)]
        let lanes = [main, settle]
        for lane in lanes {
            if lane.isBusy, let fd = lane.descriptor { fds.append(pollfd(fd: fd, events: Int16(POLLIN), revents: 0)) }
        }
        for r in resultFDs { fds.append(pollfd(fd: r.fd, events: Int16(POLLIN), revents: 0)) }
        _ = poll(&fds, nfds_t(fds.count), Int32(timeoutMillis))
        var out: [WorkerEvent] = []
        if fds[0].revents != 0 {
            var bytes = [UInt8](repeating: 0, count: 16)
            _ = read(stopPipe.read, &bytes, 16)
            out.append(.stop)
        }
        out += receiveReplies()
        out += takeResults()
        if out.isEmpty { out.append(.tick) }
        return out
    }

    /// Every reply that has arrived, on both lanes; a lost connection ends both (and every
    /// request on them) after the replies that came before it.
    private func receiveReplies() -> [WorkerEvent] {
        var out: [WorkerEvent] = []
        for lane in [main, settle] where lane.isBusy {
            do throws(RedisError) {
                for (id, result) in try lane.receive() where id > 0 {
                    switch result {
                    case .success(let reply): out.append(.replied(id: id, reply))
                    case .failure(let e) where e.connectionLost:
                        out.append(lost(e))
                        return out
                    case .failure(let e): out.append(.failed(id: id, e))
                    }
                }
            } catch {
                out.append(lost(QueueError(error.description, connectionLost: true, permanent: error.isPermanent)))
                return out
            }
        }
        return out
    }

    /// Both connections closed: the machine hears `connectionLost`.
    private func lost(_ e: QueueError) -> WorkerEvent {
        main.close()
        settle.close()
        return .connectionLost(e)
    }

    /// Every result the clients have, as one event.
    private func takeResults() -> [WorkerEvent] {
        var reader = NoteResultReader()
        for (_, client) in clients.clients {
            while client.poll(max: 4096, timeoutMillis: 0, into: &reader).count > 0 {}
        }
        return reader.results.isEmpty ? [] : [.results(reader.results)]
    }

    // MARK: - Actions

    /// Carries out `actions`; returns the events they caused at once (what a send took).
    private func perform(_ actions: [WorkerAction]) -> [WorkerEvent] {
        var out: [WorkerEvent] = []
        for action in actions {
            switch action {
            case .connect:
                out.append(connect())
            case .request(let id, let request, let lane):
                let l = lane == .settle ? settle : main
                do throws(RedisError) {
                    try l.send(id: id, request)
                } catch {
                    out.append(lost(QueueError(error.description, connectionLost: true, permanent: error.isPermanent)))
                }
            case .send(let app, let items):
                out.append(.submitted(app: app, submit(app: app, items)))
            case .closeClients:
                clients.close(drainMillis: 0)
                out += takeResults()
            case .log(let line):
                switch line.level {
                case .info: log.info(line.message, line.fields)
                case .warning: log.warning(line.message, line.fields)
                case .error: log.error(line.message, line.fields)
                }
            case .apnsEvent(let kind, let app, let detail):
                events.note(kind, app: app, detail: detail)
            case .recorded(let tallies):
                metrics.outcomes(tallies)
            case .stopped:
                finished = true
            case .fatal(let message):
                fatalMessage = message
                finished = true
            }
        }
        return out
    }

    /// Connects both lanes and sets the shard up (group, scripts).
    private func connect() -> WorkerEvent {
        main.close()
        settle.close()
        do throws(RedisError) {
            let m = try connector.connect()
            let replies = try m.pipeline(commands.setupCommands())
            do throws(QueueError) {
                try commands.checkSetup(replies)
            } catch {
                m.close()
                return .connectFailed(error)
            }
            let s = try connector.connect()
            main.attach(m)
            settle.attach(s)
            nextHeartbeatNanos = 0
            return .connected
        } catch {
            main.close()
            return .connectFailed(QueueError(error.description, connectionLost: true, permanent: error.isPermanent))
        }
    }

    /// Gives `app`'s client `items`, without waiting: what it took, refused and had no room for.
    private func submit(app: String, _ items: [SendItem]) -> SubmitReport {
        var report = SubmitReport()
        guard let client = clients.clients[app] else {
            report.notTaken = items.map(\.tag)
            report.closing = true
            return report
        }
        let batch = SendBatch(items: items, defaultTopic: clients.policies[app]?.topics.first ?? "")
        var start = 0
        while start < items.count {
            let r = client.send(batch, from: start, timeoutMillis: 0)
            report.taken += items[start..<(start + r.accepted)].map(\.tag)
            start += r.accepted
            guard let error = r.error else { break }
            if error.status == .queueFull || error.status == .closed {
                report.notTaken += items[start...].map(\.tag)
                report.closing = error.status == .closed
                break
            }
            report.refused.append((items[start].tag, NotificationRules.Violation(error.status, error.description)))
            start += 1
        }
        return report
    }

    // MARK: - Metrics, heartbeat

    /// Hands the counters and gauges to the metrics, flushes the APNs event log and writes the
    /// heartbeat (at most five times a second; the heartbeat every 2 s).
    private func publishIfDue() {
        let now = MonotonicTime.nanos()
        guard now >= nextPublishNanos else { return }
        nextPublishNanos = now + 200_000_000
        let c = machine.counters
        var open = 0
        for (app, client) in clients.clients {
            let stats = client.stats()
            open += Int(stats.connections_open)
            noteClientEvents(app: app, stats)
        }
        events.flush()
        var gauges: [String: Double] = ["in_flight": Double(machine.inFlightCount), "held_entries": Double(machine.heldEntryCount),
                                        "unsettled": Double(machine.unsettledCount), "connections_open": Double(open),
                                        "pending": Double(machine.backlog.pending), "stopping": machine.isStopping ? 1 : 0]
        if let lag = machine.backlog.lag { gauges["lag"] = Double(lag) }
        metrics.publish(counters: ["read": c.read, "sent": c.sent, "resent": c.resent, "duplicates": c.duplicates,
                                   "reclaimed": c.reclaimed, "dead_lettered": c.deadLettered, "delayed": c.delayed,
                                   "promoted": c.promoted, "redis_reconnects": c.redisReconnects, "checkpoints": c.checkpoints],
                        gauges: gauges)
        if now >= nextHeartbeatNanos, main.connection != nil, !finished {
            nextHeartbeatNanos = now + 2_000_000_000
            do throws(RedisError) {
                try main.send(id: 0, .heartbeat(heartbeat()))
            } catch {
                // The machine hears of the loss from its own next request's failure.
            }
        }
    }

    /// This worker's heartbeat: its field of `workers:{s}`, read by `swiftpush status` (docs/worker.md, "Status").
    private func heartbeat() -> String {
        let c = machine.counters
        func q(_ s: String) -> String {
            "\"" + s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
        }
        var host = [CChar](repeating: 0, count: 256)
        gethostname(&host, 255)
        let counters = "{\"read\":\(c.read),\"sent\":\(c.sent),\"accepted\":\(c.accepted),\"rejected\":\(c.rejected),\"failed\":\(c.failed)}"
        return "{\"consumer\":\(q(commands.consumer)),\"host\":\(q(String(cString: host))),\"pid\":\(getpid()),"
            + "\"version\":\(q(PUSH_VERSION_STRING)),\"started_ms\":\(startedMillis),\"heartbeat_ms\":\(Self.wallMillis()),"
            + "\"shards\":[\(q(configuration.shard))],\"in_flight\":\(machine.inFlightCount),\"held_entries\":\(machine.heldEntryCount),"
            + "\"counters\":\(counters)}"
    }

    /// A clean stop removes this worker's heartbeat (one try, when the main connection is idle).
    private func dropHeartbeat() {
        guard let c = main.connection, !main.isBusy else { return }
        _ = try? c.command(commands.commands(for: .dropHeartbeat)[0])
    }

    /// GOAWAYs, counted by the client: the ones since the last look become events.
    private func noteClientEvents(app: String, _ stats: push_stats) {
        let seen = goawaysSeen[app] ?? 0
        guard stats.goaways > seen else { return }
        goawaysSeen[app] = stats.goaways
        var s = stats
        let reason = withUnsafeBytes(of: &s.last_goaway_reason) { raw in
            String(decoding: raw.prefix(raw.firstIndex(of: 0) ?? raw.count), as: UTF8.self)
        }
        events.note(.goaway, app: app, count: Int(stats.goaways - seen), detail: reason.isEmpty ? "" : "last reason: \(reason)")
    }

    /// The counters, for the last log line.
    func counterFields() -> [String: String] {
        let c = machine.counters
        return ["read": String(c.read), "sent": String(c.sent), "resent": String(c.resent), "accepted": String(c.accepted),
                "rejected": String(c.rejected), "failed": String(c.failed), "duplicates": String(c.duplicates),
                "reclaimed": String(c.reclaimed), "dead_lettered": String(c.deadLettered), "delayed": String(c.delayed),
                "promoted": String(c.promoted), "redis_reconnects": String(c.redisReconnects), "checkpoints": String(c.checkpoints),
                "left_pending": String(c.leftPending)]
    }

    // MARK: - Clocks

    static func now() -> WorkerTime { WorkerTime(nanos: MonotonicTime.nanos(), wallMillis: wallMillis()) }

    static func wallMillis() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
    }
}
