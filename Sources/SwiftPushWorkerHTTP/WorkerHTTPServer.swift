import Hummingbird
import Logging
import SwiftPushWorker

/// The worker's HTTP server (`metrics_port`): Hummingbird (HTTP/1.1, keep-alive, any number of
/// connections) on its own event loop threads, so that no client — an idle connection, a
/// request sent half, a slow reader — holds up another or the worker's loop, which runs on its
/// own thread. Routes: `WorkerRoutes`.
public final class WorkerHTTPServer: @unchecked Sendable {
    /// The port it listens on (useful when 0 was asked for).
    public let port: Int
    /// A connection with nothing to read or write for this long is closed (an abandoned
    /// keep-alive, a request never finished).
    public static let idleTimeoutSeconds: Int64 = 60
    private let task: Task<Void, Never>

    /// Listens on `host:port` (0: any free port) and serves `routes`; returns once it listens
    /// (blocking the calling thread: for a thread of the program's own, never a task's).
    public convenience init(host: String, port: Int, routes: WorkerRoutes) throws(ConfigurationError) {
        let (start, task) = Self.launch(host: host, port: port, routes: routes)
        guard let result = start.wait(seconds: 30) else {
            task.cancel()
            throw ConfigurationError("metrics: the server did not start listening on \(host):\(port) within 30 s")
        }
        try self.init(result, task: task, host: host, port: port)
    }

    /// Listens on `host:port` and serves `routes`; returns once it listens (from a task).
    public static func start(host: String, port: Int, routes: WorkerRoutes) async throws(ConfigurationError) -> WorkerHTTPServer {
        let (start, task) = launch(host: host, port: port, routes: routes)
        return try WorkerHTTPServer(await start.value(), task: task, host: host, port: port)
    }

    private init(_ result: Result<Int, any Error>, task: Task<Void, Never>, host: String, port: Int) throws(ConfigurationError) {
        self.task = task
        switch result {
        case .success(let bound): self.port = bound
        case .failure(let error): throw ConfigurationError("metrics: cannot listen on \(host):\(port): \(error)")
        }
    }

    /// Starts the server's task; its start is reported to the returned `ServerStart`.
    private static func launch(host: String, port: Int, routes: WorkerRoutes) -> (ServerStart, Task<Void, Never>) {
        let start = ServerStart()
        var logger = Logger(label: "swiftpush.http") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = .error
        let app = Application(
            router: routes.router(),
            server: .http1(configuration: .init(idleTimeout: .seconds(idleTimeoutSeconds))),
            configuration: .init(address: .hostname(host, port: port)),
            onServerRunning: { channel in start.listening(on: channel.localAddress?.port ?? 0) },
            logger: logger)
        let task = Task.detached {
            do {
                try await app.run()
                start.ended(ConfigurationError("the server stopped"))
            } catch {
                start.ended(error)
            }
        }
        return (start, task)
    }

    /// Stops listening and closes every connection (tests; a worker's server lives as long as
    /// the process).
    public func stop() async {
        task.cancel()
        await task.value
    }
}
