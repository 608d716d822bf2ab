#if canImport(Glibc)
import Glibc
#endif
import CSwiftPushABI
import PushClientCore
import PushCore
import PushTransport
import SwiftPushRedis
import SwiftPushKeys
import SwiftPushWorkerMachine
import SwiftPushWorkerRedis

/// The thin I/O layer under the worker's machines (`ShardMachine`, one per shard it serves):
/// it owns the thread, each shard's two Redis connections (`RedisLane`: reads, claims and the
/// rest on one, settles on the other; on a Redis Cluster, to the master of the shard's slot,
/// found through a `RedisRouter`) and the apps' clients, which every shard shares; it waits on
/// all of them in one `poll`, turns what happened into each machine's events and carries out
/// their actions. No rule of the protocol lives here (docs/worker.md).
///
/// A cluster's redirect or failover reaches a machine as a lost connection (the replies say
/// MOVED, CLUSTERDOWN...; or the master is gone): it reconnects with its back-off, and the
/// driver asks the router for the slot's master again, from a fresh map.
///
/// Threads: `run` owns everything on the calling thread; the clients' I/O threads only publish
/// results; `requestStop` may be called from any thread (the signal thread).
public final class WorkerDriver {
    let configuration: WorkerConfiguration
    let connector: RedisConnector
    /// Where each shard's slot is served, on a cluster (nil: one server).
    private let router: RedisRouter?
    let consumer: String
    let log: WorkerLog
    let clients: AppClients
    let events: APNsEventLog
    /// What `/metrics` shows (published a few times a second).
    public let metrics: WorkerMetrics
    private let runners: [ShardRunner]
    /// A pipe: `requestStop` writes its second end, the loop polls its first.
    private let stopPipe: (read: Int32, write: Int32)
    private var resultFDs: [Int32] = []
    /// GOAWAYs counted by each client (key: app, and `fast` for the fast lane's), seen so far.
    private var goawaysSeen: [String: UInt64] = [:]
    private var nextPublishNanos: UInt64 = 0
    private let startedMillis: Int64
    /// Every time the driver reads (`WorkerClock`).
    private let clock: WorkerClock
    private var clientsClosed = false
    private var fatalMessage: String?

    /// A driver for `configuration`'s shards on `connector`, as consumer `consumer`: the apps'
    /// clients are opened here (a credential set that cannot be used fails now).
    /// `clock`: where every time the driver uses comes from (`WorkerClock`), its log's included.
    public init(configuration: WorkerConfiguration, connector: RedisConnector, consumer: String,
                log: WorkerLog = WorkerLog(), clock: @escaping WorkerClock = WorkerTime.system) throws(ConfigurationError) {
        self.configuration = configuration
        self.clock = clock
        self.connector = connector
        self.consumer = consumer
        // The log's times, the loop's liveness and the event log's intervals on the driver's
        // clock too.
        var log = log
        log.clock = clock
        self.log = log
        router = connector.configuration.cluster ? RedisRouter(connector: connector) : nil
        metrics = WorkerMetrics(clock: { clock().nanos })
        events = APNsEventLog(log: log, clock: { clock().nanos })
        let clients = try AppClients(configuration: configuration, events: events)
        self.clients = clients
        let wait = RedisWait(connector.configuration)
        var seed = UInt64(truncatingIfNeeded: clock().nanos)
        var runners: [ShardRunner] = []
        for (k, shard) in configuration.shards.enumerated() {
            seed &+= 0x9E37_79B9_7F4A_7C15
            runners.append(ShardRunner(index: k, commands: configuration.shardCommands(shard: shard, consumer: consumer),
                                       machine: ShardMachine(settings: configuration.machineSettings, apps: clients.policies, seed: seed),
                                       wait: wait))
        }
        self.runners = runners
        var ends: [Int32] = [-1, -1]
        if pipe(&ends) != 0 { throw ConfigurationError("cannot make a pipe: errno \(errno)") }
        for fd in ends {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        stopPipe = (ends[0], ends[1])
        startedMillis = clock().wallMillis
        metrics.showClients(clients.all)
        metrics.showEvents(events)
        for (app, _, client) in clients.all {
            do throws(ClientError) {
                resultFDs.append(try client.resultFileDescriptor())
            } catch {
                throw ConfigurationError("app \"\(app)\": \(error.description)")
            }
        }
    }

    deinit {
        Glibc.close(stopPipe.read)
        Glibc.close(stopPipe.write)
        router?.close()
    }

    /// Asks `run` to stop reading, finish what is in flight (up to `drain_ms`), settle and
    /// return. Safe from any thread (also from a signal thread).
    public func requestStop() {
        var one: UInt8 = 1
        _ = write(stopPipe.write, &one, 1)
    }

    /// What the machines did, summed over the shards (read after `run`).
    public var counters: ShardMachine.Counters {
        runners.reduce(ShardMachine.Counters()) { $0 + $1.machine.counters }
    }

    /// Whether every machine has stopped, or one failed for good.
    private var finished: Bool { fatalMessage != nil || runners.allSatisfy(\.finished) }

    /// Runs until a stop is requested and everything taken is settled (or the drain time is
    /// over). Returns true when nothing it took was left pending.
    public func run() -> Bool {
        // Redis connections write on this thread: a Redis that vanishes must give EPIPE (a lost
        // connection, reconnected), not SIGPIPE's default action of killing the process.
        IOThread.blockSIGPIPE()
        while !finished {
            for r in runners { handlePending(r) }
            if finished { break }
            publishIfDue()
            waitForEvents()
        }
        clients.close(drainMillis: 0)
        for r in runners {
            dropHeartbeat(r)
            r.closeLanes()
        }
        router?.close()
        nextPublishNanos = 0
        publishIfDue()
        log.info("stopped", counterFields())
        if let fatalMessage {
            log.error("stopped: \(fatalMessage)", [:])
            return false
        }
        return counters.leftPending == 0 && counters.handedBack == 0
    }

    /// Gives `r`'s machine its events, and those its actions cause at once, in order.
    private func handlePending(_ r: ShardRunner) {
        while !r.pending.isEmpty && fatalMessage == nil {
            let event = r.pending.removeFirst()
            if r.finished { continue }
            let actions = r.machine.handle(event, at: clock())
            let caused = perform(actions, r)
            r.pending.insert(contentsOf: caused, at: 0)
        }
    }

    // MARK: - Waiting

    /// Waits (at most until a machine's next wake, and a fifth of a second for the metrics)
    /// for a stop, replies from Redis or results; hands them to the machines (a tick to those
    /// with none).
    private func waitForEvents() {
        let now = clock().nanos
        var timeoutMillis = 200
        for r in runners where !r.finished {
            if let wake = r.machine.nextWakeNanos() {
                timeoutMillis = wake <= now ? 0 : min(timeoutMillis, Int((wake - now + 999_999) / 1_000_000))
            }
        }
        var fds = [pollfd(fd: stopPipe.read, events: Int16(POLLIN), revents: 0)]
        for r in runners {
            for lane in r.lanes {
                if lane.isBusy, let fd = lane.descriptor { fds.append(pollfd(fd: fd, events: Int16(POLLIN), revents: 0)) }
            }
        }
        for fd in resultFDs { fds.append(pollfd(fd: fd, events: Int16(POLLIN), revents: 0)) }
        _ = poll(&fds, nfds_t(fds.count), Int32(timeoutMillis))
        if fds[0].revents != 0 {
            var bytes = [UInt8](repeating: 0, count: 16)
            _ = read(stopPipe.read, &bytes, 16)
            for r in runners { r.pending.append(.stop) }
        }
        for r in runners { receiveReplies(r) }
        takeResults()
        for r in runners where r.pending.isEmpty { r.pending.append(.tick) }
    }

    /// Every reply that has arrived on `r`'s lanes; a lost connection ends them all (and every
    /// request on them) after the replies that came before it.
    private func receiveReplies(_ r: ShardRunner) {
        for lane in r.lanes where lane.isBusy {
            do throws(RedisError) {
                for (id, result) in try lane.receive() where id > 0 {
                    switch result {
                    case .success(let reply): r.pending.append(.replied(id: id, reply))
                    case .failure(let e) where e.connectionLost:
                        r.pending.append(lost(r, e))
                        return
                    case .failure(let e): r.pending.append(.failed(id: id, e))
                    }
                }
            } catch {
                r.pending.append(lost(r, QueueError(error.description, connectionLost: true, permanent: error.isPermanent)))
                return
            }
        }
    }

    /// `r`'s connections closed: its machine hears `connectionLost`; on a cluster the slot's
    /// master is looked up again before the next connect (a failover or a resharding may have
    /// moved it).
    private func lost(_ r: ShardRunner, _ e: QueueError) -> WorkerEvent {
        r.closeLanes()
        router?.follow(.retryLater(e.description))
        return .connectionLost(e)
    }

    /// Every result the clients have, each to the machine whose shard sent it.
    private func takeResults() {
        takeStarted()
        var reader = NoteResultReader()
        for (_, _, client) in clients.all {
            while client.poll(max: 4096, timeoutMillis: 0, into: &reader).count > 0 {}
        }
        if reader.results.isEmpty { return }
        if runners.count == 1 {
            runners[0].pending.append(.results(reader.results))
            return
        }
        var byRunner = [[NoteResult]](repeating: [], count: runners.count)
        for var result in reader.results {
            let (k, tag) = ShardRunner.split(result.tag)
            guard k < runners.count else { continue }
            result.tag = tag
            byRunner[k].append(result)
        }
        for (k, results) in byRunner.enumerated() where !results.isEmpty { runners[k].pending.append(.results(results)) }
    }

    /// Which notifications' requests the clients started since the last look (one tag per
    /// entry, `AppClients`), each to the machine whose shard sent it: `written`. Taken before
    /// the results, so that a machine hears an entry was written before its answers end it.
    private func takeStarted() {
        var byRunner = [[UInt64]](repeating: [], count: runners.count)
        for (_, _, client) in clients.all {
            for tag in client.takeStarted() {
                let (k, local) = ShardRunner.split(tag)
                if k < runners.count { byRunner[k].append(local) }
            }
        }
        for (k, tags) in byRunner.enumerated() where !tags.isEmpty { runners[k].pending.append(.written(tags)) }
    }

    // MARK: - Actions

    /// Carries out `actions` of `r`'s machine; returns the events they caused at once (what a
    /// send took).
    private func perform(_ actions: [WorkerAction], _ r: ShardRunner) -> [WorkerEvent] {
        var out: [WorkerEvent] = []
        for action in actions {
            switch action {
            case .connect:
                out.append(connect(r))
            case .request(let id, let request, let lane):
                let l = r.lane(lane)
                do throws(RedisError) {
                    try l.send(id: id, request)
                } catch {
                    out.append(lost(r, QueueError(error.description, connectionLost: true, permanent: error.isPermanent)))
                }
            case .send(let app, let items):
                out.append(.submitted(app: app, submit(app: app, items, tagBase: r.tagBase)))
            case .closeClients:
                // Shared by every shard: the first machine whose drain time is over closes them
                // (the shards stop together); what was in flight comes back cancelled, to each.
                if !clientsClosed {
                    clientsClosed = true
                    clients.close(drainMillis: 0)
                }
                takeResults()
            case .log(let line):
                var fields = line.fields
                if runners.count > 1 { fields["shard"] = r.commands.keys.shard }
                switch line.level {
                case .info: log.info(line.message, fields)
                case .warning: log.warning(line.message, fields)
                case .error: log.error(line.message, fields)
                }
            case .apnsEvent(let kind, let app, let detail):
                events.note(kind, app: app, detail: detail)
            case .recorded(let tallies):
                metrics.outcomes(tallies)
            case .stopped:
                r.finished = true
            case .fatal(let message):
                fatalMessage = message
            }
        }
        return out
    }

    /// Connects `r`'s three lanes (to its slot's master on a cluster) and sets its shard up
    /// (group, scripts).
    private func connect(_ r: ShardRunner) -> WorkerEvent {
        r.closeLanes()
        do throws(RedisError) {
            let node = try router?.node(forSlot: r.slot) ?? connector.configuration.nodes[0]
            let m = try connector.connect(to: node)
            let replies = try m.pipeline(r.commands.setupCommands())
            do throws(QueueError) {
                try r.commands.checkSetup(replies)
            } catch {
                m.close()
                router?.follow(.retryLater(error.description))
                return .connectFailed(error)
            }
            let s = try connector.connect(to: node)
            let f = try connector.connect(to: node)
            r.main.attach(m)
            r.settle.attach(s)
            r.fast.attach(f)
            r.nextHeartbeatNanos = 0
            return .connected
        } catch {
            r.closeLanes()
            router?.follow(.retryLater(error.description))
            return .connectFailed(QueueError(error.description, connectionLost: true, permanent: error.isPermanent))
        }
    }

    /// Gives `app`'s clients `items` (their tags raised by `tagBase`), without waiting: what
    /// they took, refused and had no room for. The fast lane's notifications go to the app's
    /// fast client (`AppClients`), the others to its bulk client, so that a fast one never
    /// queues behind bulk ones already handed over.
    private func submit(app: String, _ items: [SendItem], tagBase: UInt64) -> SubmitReport {
        let fast = items.filter { FastLane.isFast($0.entry.entry.entryID) }
        if fast.isEmpty { return submit(app: app, items, fast: false, tagBase: tagBase) }
        if fast.count == items.count { return submit(app: app, items, fast: true, tagBase: tagBase) }
        var report = submit(app: app, fast, fast: true, tagBase: tagBase)
        let bulk = submit(app: app, items.filter { !FastLane.isFast($0.entry.entry.entryID) }, fast: false, tagBase: tagBase)
        report.taken += bulk.taken
        report.refused += bulk.refused
        report.notTaken += bulk.notTaken
        report.closing = report.closing || bulk.closing
        return report
    }

    /// Gives `items` to `app`'s client of one lane.
    private func submit(app: String, _ items: [SendItem], fast: Bool, tagBase: UInt64) -> SubmitReport {
        var report = SubmitReport()
        guard let client = clients.client(app: app, fast: fast) else {
            report.notTaken = items.map(\.tag)
            report.closing = true
            return report
        }
        let batch = SendBatch(items: items, defaultTopic: clients.policies[app]?.topics.first ?? "", tagBase: tagBase)
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

    /// Hands the counters and gauges (summed over the shards) to the metrics, flushes the APNs
    /// event log and writes each shard's heartbeat (at most five times a second; the heartbeat
    /// every 2 s).
    private func publishIfDue() {
        let now = clock().nanos
        guard now >= nextPublishNanos else { return }
        nextPublishNanos = now + 200_000_000
        let c = counters
        var open = 0
        for (app, fast, client) in clients.all {
            let stats = client.stats()
            open += Int(stats.connections_open)
            noteClientEvents(app: app, seenKey: fast ? app + "\u{0}fast" : app, stats)
        }
        events.flush()
        var gauges: [String: Double] = ["in_flight": 0, "held_entries": 0, "unsettled": 0, "pending": 0,
                                        "connections_open": Double(open), "stopping": 0]
        var lag: Int?
        for r in runners {
            let m = r.machine
            gauges["in_flight"]! += Double(m.inFlightCount)
            gauges["held_entries"]! += Double(m.heldEntryCount)
            gauges["unsettled"]! += Double(m.unsettledCount)
            gauges["pending"]! += Double(m.backlog.pending)
            if m.isStopping { gauges["stopping"] = 1 }
            if let l = m.backlog.lag { lag = (lag ?? 0) + l }
        }
        if let lag { gauges["lag"] = Double(lag) }
        metrics.publish(counters: c.named(in: .metrics),
                        gauges: gauges)
        for r in runners where now >= r.nextHeartbeatNanos && r.main.connection != nil && !r.finished && !finished {
            r.nextHeartbeatNanos = now + 2_000_000_000
            do throws(RedisError) {
                try r.main.send(id: 0, .heartbeat(heartbeat(r)))
            } catch {
                // The machine hears of the loss from its own next request's failure.
            }
        }
    }

    /// This worker's heartbeat in `r`'s shard: its field of `workers:{s}`, read by `swiftpush
    /// status` (docs/worker.md, "Status"): every shard it serves, and this shard's figures.
    private func heartbeat(_ r: ShardRunner) -> String {
        var host = [CChar](repeating: 0, count: 256)
        gethostname(&host, 255)
        var h = Heartbeat(consumer: consumer)
        h.host = String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        h.pid = Int(getpid())
        h.version = PUSH_VERSION_STRING
        h.startedMillis = Int(startedMillis)
        h.heartbeatMillis = Int(clock().wallMillis)
        h.shards = configuration.shards
        h.inFlight = r.machine.inFlightCount
        h.heldEntries = r.machine.heldEntryCount
        h.counters = r.machine.counters.named(in: .heartbeat)
        return h.json
    }

    /// A clean stop removes this worker's heartbeat from `r`'s shard (one try, when the main
    /// connection is idle).
    private func dropHeartbeat(_ r: ShardRunner) {
        guard let c = r.main.connection, !r.main.isBusy else { return }
        _ = try? c.command(r.commands.commands(for: .dropHeartbeat)[0])
    }

    /// GOAWAYs, counted by the client: the ones since the last look become events.
    /// `seenKey`: the client's key in `goawaysSeen` (one per lane).
    private func noteClientEvents(app: String, seenKey: String, _ stats: push_stats) {
        let seen = goawaysSeen[seenKey] ?? 0
        guard stats.goaways > seen else { return }
        goawaysSeen[seenKey] = stats.goaways
        var s = stats
        let reason = withUnsafeBytes(of: &s.last_goaway_reason) { raw in
            String(decoding: raw.prefix(raw.firstIndex(of: 0) ?? raw.count), as: UTF8.self)
        }
        events.note(.goaway, app: app, count: Int(stats.goaways - seen), detail: reason.isEmpty ? "" : "last reason: \(reason)")
    }

    /// The counters, for the last log line.
    func counterFields() -> [String: String] { counters.logFields }
}
