import CSwiftPushABI
import PushCore
import PushClientCore
import PushTransport

/// One client per credential set (APNs binds a connection to one team), opened from the
/// configuration; the driver polls each one's results (`resultFileDescriptor` in its poll).
final class AppClients {
    private(set) var clients: [String: PushClientGroup] = [:]
    /// What the entry parser needs to know of each app.
    let policies: [String: AppPolicy]
    /// Each client's log callback's user data: alive as long as the clients.
    private var sinks: [AppEventSink] = []

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
                for (_, opened) in clients { _ = opened.close(drainMillis: 0) }
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
            } catch {
                for (_, opened) in clients { _ = opened.close(drainMillis: 0) }
                throw ConfigurationError("app \"\(name)\": \(error.description)")
            }
            policies[name] = AppPolicy(topics: app.topics ?? [])
        }
        self.policies = policies
    }

    /// Closes every client: in-flight notifications get up to `drainMillis`, the rest are
    /// cancelled (their results can still be polled).
    func close(drainMillis: Int32 = 0) {
        for (_, client) in clients { _ = client.close(drainMillis: drainMillis) }
    }
}
