import PushClientCore
import SwiftPushKit
import SwiftPushWorkerMachine

extension WorkerConfiguration {
    /// The client configuration of app `name`, made as every host makes one: the app's
    /// options through `APNsConfiguration(options:naming:)` (the table's defaults for what it
    /// does not say, each value checked by the C ABI's setters, key files read and checked),
    /// then what the worker decides itself: the deadline (`deadline_ms`) and room in the queue
    /// for everything in flight. Reads the app's files but connects to nothing (`swiftpush
    /// worker --check-config` calls it for every app). The message names the app and the key,
    /// never a secret.
    package func clientConfiguration(app name: String) throws(ConfigurationError) -> ClientConfiguration {
        guard let app = apps[name] else { throw ConfigurationError("no app \"\(name)\"") }
        var c: ClientConfiguration
        do throws(PushError) {
            c = try app.options.appConfiguration().clientConfiguration()
        } catch {
            throw ConfigurationError("app \"\(name)\": \(error.message)")
        }
        c.timing.deadlineMillis = deadlineMillis
        // Fail-fast is for a caller waiting on one send; the worker holds its notifications in
        // Redis, where an APNs outage must not turn them into FAILED Unreachable records within
        // seconds (its policy resends a local failure only 3 times): off unless the app sets it.
        if app.options.numbers[.unreachableAfterMs] == nil { c.recovery.unreachableAfterMillis = 0 }
        // Room for everything in flight (max_in_flight per shard) plus results on their way to the callback.
        c.pool.queueCapacity = machineSettings.maxInFlight * shards.count + 1024
        return c
    }

    /// Everything that can be checked without connecting: the rules of `check()`, then every
    /// app's client configuration (its files read, its key loaded). What `--check-config` runs.
    public func validateWithoutConnecting() throws(ConfigurationError) {
        try check()
        for name in apps.keys.sorted() { _ = try clientConfiguration(app: name) }
    }
}
