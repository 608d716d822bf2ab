import ServiceLifecycle

/// The client as a ServiceLifecycle `Service`: put it in the host's `ServiceGroup`, and the
/// host's graceful shutdown (SIGTERM, SIGINT: whatever the group is configured with) drains it
/// — notifications in flight get up to the configuration's `shutdownDrain` to finish, the rest
/// are cancelled, every one gets its result — and closes it. Cancelled instead of shut down
/// gracefully, it closes without draining.
///
/// ```swift
/// let group = ServiceGroup(services: [client, server], gracefulShutdownSignals: [.sigterm], logger: logger)
/// try await group.run()
/// ```
extension APNsClient: Service {
    /// Runs until the graceful shutdown (or cancellation), then shuts the client down.
    public func run() async throws {
        do {
            try await gracefulShutdown()
            await shutdown()
        } catch {
            await shutdown(drain: .zero)
        }
    }
}
