import CSwiftPushABI
import PushCore
import PushClientCore
import PushTransport
import SwiftPushWorkerMachine

/// Two clients per credential set (APNs binds a connection to one team), opened from the
/// configuration; the driver polls each one's results (`resultFileDescriptor` in its poll).
///
/// The second, `fastClients`, carries only the fast lane's notifications (docs/worker.md, "The
/// fast lane"): built from the same options, with one connection and one I/O thread of its own,
/// so that a fast request never waits in a client queue behind the bulk requests already handed
/// over (up to `max_in_flight − fast_reserve` of them: ~95 ms at 100,000/s, measured).
final class AppClients {
    /// Each app's client for the bulk lane.
    private(set) var clients: [String: PushClientGroup] = [:]
    /// Each app's client for the fast lane (`push:{s}:fast`): one connection of its own.
    private(set) var fastClients: [String: PushClientGroup] = [:]
    /// What the entry parser needs to know of each app.
    let policies: [String: AppPolicy]
    /// Each client's log callback's user data: alive as long as the clients.
    private var sinks: [AppEventSink] = []

    /// Closes the clients before the sinks go: their I/O threads call back into the sinks
    /// (unretained), and a driver released without `run` (which closes them) left the threads
    /// running and reporting into freed memory (a crash seen in WorkerClockTests). Closing again
    /// after `run`'s close returns at once.
    deinit { close() }

    /// Opens every app's client (`WorkerConfiguration.clientConfiguration(app:)`: every option
    /// the app sets), its trouble going to `events`; fails on the first credential set that
    /// cannot be used (the message names the app, never the secret).
    init(configuration: WorkerConfiguration, events: APNsEventLog) throws(ConfigurationError) {
        var policies: [String: AppPolicy] = [:]
        for (name, app) in configuration.apps.sorted(by: { $0.key < $1.key }) {
            var c: ClientConfiguration
            do throws(ConfigurationError) {
                c = try configuration.clientConfiguration(app: name)
            } catch {
                for opened in Array(clients.values) + Array(fastClients.values) { _ = opened.close(drainMillis: 0) }
                throw error
            }
            let sink = AppEventSink(app: name, events: events)
            sinks.append(sink)
            c.callbacks.log = sink.logCallback
            // Which entries had a request written in this life (docs/worker.md, "Dead letters"):
            // one report per entry (tags are `serial << 10 | index`).
            c.startedTagShift = 10
            do throws(ClientError) {
                clients[name] = try PushClientGroup(configuration: c)
                fastClients[name] = try PushClientGroup(configuration: Self.fastLane(c))
            } catch {
                for opened in Array(clients.values) + Array(fastClients.values) { _ = opened.close(drainMillis: 0) }
                throw ConfigurationError("app \"\(name)\": \(error.description)")
            }
            policies[name] = AppPolicy(topics: app.topics ?? [])
        }
        self.policies = policies
    }

    /// The fast lane's client configuration, made from the app's bulk one: the same options
    /// (credentials, endpoint, timing, streams, queue room), one connection and one I/O thread,
    /// a fixed pool. Fast traffic is a trickle next to a campaign's; what it needs is a queue
    /// that holds nothing else.
    static func fastLane(_ bulk: ClientConfiguration) -> ClientConfiguration {
        var c = bulk
        c.pool.connections = 1
        c.pool.minConnections = 0
        c.pool.ioThreads = 1
        return c
    }

    /// Every client, bulk and fast, with its app and lane (`fast`: the fast lane's), sorted by
    /// app then lane: what the driver polls, counts and closes.
    var all: [(app: String, fast: Bool, client: PushClientGroup)] {
        clients.keys.sorted().flatMap { app in
            [(app, false, clients[app]!)] + (fastClients[app].map { [(app, true, $0)] } ?? [])
        }
    }

    /// The client of `app` for one lane.
    func client(app: String, fast: Bool) -> PushClientGroup? {
        fast ? fastClients[app] : clients[app]
    }

    /// Closes every client, both lanes: in-flight notifications get up to `drainMillis`, the
    /// rest are cancelled (their results can still be polled). The worker drains itself
    /// (`drain_ms`) before it closes them, with 0.
    func close(drainMillis: Int32 = 0) {
        for (_, _, client) in all { _ = client.close(drainMillis: drainMillis) }
    }
}
