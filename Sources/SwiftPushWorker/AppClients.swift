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

    /// Opens every app's client, its trouble going to `events`; fails on the first credential
    /// set that cannot be used (the message names the app, never the secret).
    init(configuration: WorkerConfiguration, events: APNsEventLog) throws(ConfigurationError) {
        var policies: [String: AppPolicy] = [:]
        for (name, app) in configuration.apps.sorted(by: { $0.key < $1.key }) {
            var c = ClientConfiguration()
            if let host = app.host {
                c.endpoint.host = host
            } else {
                c.endpoint.host = app.environment == "sandbox" ? "api.sandbox.push.apple.com" : "api.push.apple.com"
            }
            c.endpoint.port = app.port ?? 443
            c.endpoint.caFile = app.caFile
            c.pool.connections = app.connections ?? 2
            c.timing.deadlineMillis = configuration.deadlineMillis
            // Room for everything in flight (max_in_flight per shard) plus results on their way to the callback.
            c.pool.queueCapacity = configuration.maxInFlight * configuration.shards.count + 1024
            let sink = AppEventSink(app: name, events: events)
            sinks.append(sink)
            c.callbacks.log = sink.logCallback
            if let keyFile = app.keyFile {
                do throws(FileBytes.ReadError) {
                    c.credentials.tokenKey = try FileBytes.readSecret(path: keyFile, limit: 64 * 1024)
                } catch {
                    throw ConfigurationError("app \"\(name)\": cannot read key_file: \(error.description)")
                }
                c.credentials.keyID = app.keyID ?? ""
                c.credentials.teamID = app.teamID ?? ""
            } else if let p12 = app.p12File {
                do throws(FileBytes.ReadError) {
                    c.credentials.clientCertificate = .pkcs12(bytes: try FileBytes.readSecret(path: p12, limit: 1 << 20),
                                                  password: SecretBytes(copying: app.p12Password ?? ""))
                } catch {
                    throw ConfigurationError("app \"\(name)\": cannot read p12_file: \(error.description)")
                }
            } else if let cert = app.certFile {
                c.credentials.clientCertificate = .pem(certificateFile: cert, keyFile: app.certKeyFile ?? cert)
            }
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
