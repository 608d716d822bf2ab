import Logging
import PushCore
import PushChannels
import PushClientCore

/// An APNs client for Swift concurrency: `send` a notification and `await` its result, send a
/// batch and iterate its results as they come, broadcast to channels and manage them, and shut
/// down cleanly (a ServiceLifecycle `Service`: a host's SIGTERM drains and closes it).
///
/// ```swift
/// let client = try APNsClient(configuration: APNsConfiguration(environment: .sandbox,
///     credentials: .tokenKey(file: "AuthKey_ABC123DEFG.p8", keyID: "ABC123DEFG", teamID: "DEF123GHIJ"),
///     defaultTopic: "com.example.app"), logger: logger)
/// var alert = PushPayload.Builder()
/// alert.title = "Hello"
/// let result = try await client.send(PushNotification(deviceToken: token, payload: PushPayload(alert)))
/// if result.reason == .unregistered { forget(token, since: result.timestamp) }
/// await client.shutdown()
/// ```
///
/// Nothing here blocks a cooperative thread: a notification is validated and copied into the
/// client's slot without waiting, and every wait — for a result, for a free slot, for a
/// connection, for the close, for a channel call — is a suspended task, resumed by one of a few
/// long-lived threads of the client's (never a thread per call: docs/architecture.md, "Swift
/// API threads"). Built on `APNsEngine` (for hosts that own a thread); one client uses one
/// engine alone.
public final class APNsClient: Sendable {
    private let router: ResultRouter
    /// The thread that answers every `waitUntilConnected`.
    private let connectionWaits: ConnectionWaits
    /// The thread that carries out the channel calls, one after another.
    let channelCalls = CallThread()
    private let configuration: APNsConfiguration
    private let logger: Logger
    /// The channel management client, opened by the first channel call.
    private let channels = Locked<ChannelManagementClient?>(nil)

    /// Opens the client: checks the configuration (`PushError` `.badOption`, `.key`, `.tls`),
    /// signs the first provider token and starts connecting in the background. The library's
    /// log events go to `logger`; results are counted through the global `MetricsSystem`.
    public init(configuration: APNsConfiguration, logger: Logger = Logger(label: "swiftpush")) throws(PushError) {
        router = ResultRouter(engine: try APNsEngine(configuration: configuration, logger: logger))
        connectionWaits = ConnectionWaits(group: router.engine.group)
        self.configuration = configuration
        self.logger = logger
    }

    deinit {
        // A client dropped without shutdown: its threads end (the notifications it holds are
        // cancelled: their waiters already ended with it).
        router.engine.group.close(drainMillis: 0)
        router.executor.stop()
        connectionWaits.stop()
        channelCalls.stop()
    }

    // MARK: - Sending

    /// Sends one notification and returns its result (accepted, rejected or failed) once APNs
    /// has answered or the notification's deadline has passed. Throws, without sending, when
    /// the notification breaks a rule (`.badDeviceToken`, `.badTopic`, `.payloadTooLarge`...)
    /// or the client is closed (`.closed`). When the client holds `pool.queueCapacity`
    /// notifications already, waits (suspended) for room.
    ///
    /// Cancelling the calling task ends the wait at once with `CancellationError`: a
    /// notification not yet written to APNs is then not sent (it ends FAILED `.cancelled`,
    /// counted once in the metrics and the log); one already written may still be delivered,
    /// and its outcome is counted when it comes. Any other error is a `PushError`.
    ///
    /// `nonisolated(nonsending)`: it runs on its caller's executor until it suspends (it only
    /// validates and queues the notification, without blocking), so a call costs no hop to the
    /// pool and back (callgrind, per notification with 1,000 tasks: 36,270 -> 35,254
    /// instructions on the client's `taskExecutor`, where each hop looks up the task's executor
    /// preference under a lock; 36,086 -> 35,904 on the pool).
    nonisolated(nonsending) public func send(_ notification: PushNotification) async throws -> PushResult {
        guard let result = await router.send(notification) else { throw CancellationError() }
        return try result.get()
    }

    /// `send(_:)` with a deadline of this call's own: `deadline` replaces the notification's
    /// (`PushNotification.deadline`; otherwise the configuration's `timing.deadline`). The
    /// result comes by then at the latest: FAILED `.queueTimeout` if the notification was never
    /// written, `.timeout` if APNs did not answer it in time.
    ///
    /// ```swift
    /// let r = try await client.send(note, deadline: .milliseconds(200))
    /// ```
    nonisolated(nonsending) public func send(_ notification: PushNotification, deadline: Duration) async throws -> PushResult {
        var n = notification
        n.deadline = deadline
        return try await send(n)
    }

    /// `send(contentsOf:)` with `deadline` for each notification that has no deadline of its
    /// own (`PushNotification.deadline`): each result comes by then, from its send, at the latest.
    public func send(contentsOf notifications: [PushNotification], deadline: Duration) -> PushBatchResults {
        send(contentsOf: notifications.map { n in
            var n = n
            if n.deadline == nil { n.deadline = deadline }
            return n
        })
    }

    /// Sends many notifications and returns their results as they come: one `BatchResult` per
    /// notification (its result, or the error that refused it), in the order outcomes arrive.
    /// The first few thousand are validated and queued before this returns; the rest follow as
    /// the client frees room. The fastest async path: one lock for many notifications, one
    /// copy of each, and results handed over in batches.
    public func send(contentsOf notifications: [PushNotification]) -> PushBatchResults {
        router.send(contentsOf: notifications)
    }

    /// A task executor of the client's own, for tasks that await many `send`s: the fastest
    /// way for many tasks that each send one notification at a time (a `send` resumed there
    /// costs no job of the cooperative pool, and the sends of the tasks that one batch of
    /// results resumed reach the client together). Use it with
    /// `withTaskExecutorPreference(client.taskExecutor) { ... }` or
    /// `Task(executorPreference: client.taskExecutor) { ... }`. One thread runs every task on
    /// it: don't block it (`APNsTaskExecutor`). It ends at `shutdown`; tasks that still prefer
    /// it run on the pool after that.
    ///
    /// ```swift
    /// await withTaskExecutorPreference(client.taskExecutor) {
    ///     await withTaskGroup(of: Void.self) { group in
    ///         for note in notes { group.addTask { _ = try? await client.send(note) } }
    ///     }
    /// }
    /// ```
    public var taskExecutor: APNsTaskExecutor { router.executor }

    // MARK: - Connecting, closing, figures

    /// Waits until every I/O thread has a connection open, for up to `timeout`. Optional
    /// (sends don't need it): it turns a misconfiguration into an error at start-up — `.tls`
    /// at once for what retrying cannot fix, `.timeout` naming the last connection error.
    /// Cancelling the calling task ends the wait at once with `CancellationError` (the client
    /// goes on connecting), as every wait of the API does (`PushError`'s rule).
    public func waitUntilConnected(timeout: Duration = .seconds(10)) async throws {
        switch await connectionWaits.wait(timeout: timeout) {
        case nil: throw CancellationError()
        case let error??: throw error
        case .some(nil): return
        }
    }

    /// Stops taking notifications (later sends throw `.closed`), lets those in flight finish for
    /// up to `drain` (nil: the configuration's `shutdownDrain`), ends the rest FAILED
    /// (Cancelled, CancelledInFlight) and closes the connections. Returns once every
    /// notification sent has its result (with its sender, or in its batch). Safe to call more
    /// than once.
    public func shutdown(drain: Duration? = nil) async {
        let engine = router.engine
        let drain = drain ?? configuration.shutdownDrain
        logger.info("shutting down", metadata: ["swiftpush.drain": "\(drain)"])
        // The close starts here and nothing blocks on it: the results thread joins the I/O
        // threads once the last result is out, then wakes this task.
        engine.close(startingOnly: drain)
        await router.waitUntilFinished()
        // After the last result: tasks that prefer the executor run on the pool from now on.
        router.executor.stop()
        channels.withLock { $0?.close() }
        logger.info("shut down", metadata: ["swiftpush.accepted": "\(engine.stats().accepted)",
                                            "swiftpush.rejected": "\(engine.stats().rejected)",
                                            "swiftpush.failed": "\(engine.stats().failed)"])
    }

    /// A snapshot of the client's counters, queues and latency.
    public func stats() -> APNsStats { router.engine.stats() }

    /// The client's counters in Prometheus text format (for a `/metrics` endpoint of the
    /// host's own, beside what swift-metrics reports), `labels` on every sample.
    public func prometheusText(labels: String = "") -> String { router.engine.prometheusText(labels: labels) }

    // MARK: - Channels (APNsClient+Channels.swift)

    /// The app of channel calls that name none.
    var defaultTopic: String? { configuration.defaultTopic }

    /// The channel management client, opened on first use.
    func channelClient() throws(PushError) -> ChannelManagementClient {
        let result = channels.withLock { current -> Result<ChannelManagementClient, PushError> in
            if let current { return .success(current) }
            do throws(PushError) {
                let opened = try openChannelClient()
                current = opened
                return .success(opened)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    private func openChannelClient() throws(PushError) -> ChannelManagementClient {
        let unresolved = try configuration.clientConfiguration()
        let c: ClientConfiguration
        do throws(ClientError) {
            c = try unresolved.resolvingCredentials()
        } catch {
            throw PushError(error)
        }
        let endpoint = configuration.channelManagement
            ?? ChannelManagementClient.managementEndpoint(forAPNsHost: configuration.environment.host).map { .custom(host: $0.host, port: $0.port) }
        guard let endpoint else {
            throw PushError(.badOption, "no channel management host is known for \(configuration.environment.host): set channelManagement")
        }
        do throws(ClientError) {
            return try ChannelManagementClient(configuration: c, host: endpoint.host, port: endpoint.port)
        } catch {
            throw PushError(error)
        }
    }
}
