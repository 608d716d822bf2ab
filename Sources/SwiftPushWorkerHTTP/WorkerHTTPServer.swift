import Hummingbird
import Logging
import SwiftPushWorker

/// The worker's HTTP server (`metrics_port`): Hummingbird (HTTP/1.1, keep-alive, any number of
/// connections), its sockets on SwiftNIO's event loop threads and its tasks on a thread of its
/// own (`ServerThread`), so that no client — an idle connection, a request sent half, a slow
/// reader — holds up another or the worker's loop, which runs on its own thread, and so that
/// `/healthz` answers even while the process's cooperative pool is blocked. Routes: `WorkerRoutes`.
public final class WorkerHTTPServer: @unchecked Sendable {
    /// The port it listens on (useful when 0 was asked for).
    public let port: Int
    /// A connection with nothing to read or write for this long is closed (an abandoned
    /// keep-alive, a request never finished).
    public static let idleTimeoutSeconds: Int64 = 60
    private let task: Task<Void, Never>
    private let thread: ServerThread

    /// Listens on `host:port` (0: any free port) and serves `routes`; returns once it listens
    /// (blocking the calling thread: for a thread of the program's own, never a task's).
    public convenience init(host: String, port: Int, routes: WorkerRoutes) throws(ConfigurationError) {
        let (start, task, thread) = Self.launch(host: host, port: port, routes: routes)
        guard let result = start.wait(seconds: 30) else {
            task.cancel()
            thread.stop()
            throw ConfigurationError("metrics: the server did not start listening on \(host):\(port) within 30 s")
        }
        try self.init(result, task: task, thread: thread, host: host, port: port)
    }

    /// Listens on `host:port` and serves `routes`; returns once it listens (from a task).
    public static func start(host: String, port: Int, routes: WorkerRoutes) async throws(ConfigurationError) -> WorkerHTTPServer {
        let (start, task, thread) = launch(host: host, port: port, routes: routes)
        return try WorkerHTTPServer(await start.value(), task: task, thread: thread, host: host, port: port)
    }

    private init(_ result: Result<Int, any Error>, task: Task<Void, Never>, thread: ServerThread, host: String, port: Int) throws(ConfigurationError) {
        self.task = task
        self.thread = thread
        switch result {
        case .success(let bound): self.port = bound
        case .failure(let error):
            thread.stop()
            throw ConfigurationError("metrics: cannot listen on \(host):\(port): \(error)")
        }
    }

    /// Starts the server's task on a `ServerThread` (the task and every child task it makes, one
    /// per connection and per request, run there); its start is reported to the `ServerStart`.
    private static func launch(host: String, port: Int, routes: WorkerRoutes) -> (ServerStart, Task<Void, Never>, ServerThread) {
        let start = ServerStart()
        // The worker's log format, not swift-log's (WorkerLogHandler); errors only.
        let logger = Logger(label: "swiftpush.http") { _ in WorkerLogHandler(sink: WorkerLog()) }
        let app = Application(
            router: routes.router(),
            server: .http1(configuration: .init(idleTimeout: .seconds(idleTimeoutSeconds))),
            configuration: .init(address: .hostname(host, port: port)),
            onServerRunning: { channel in start.listening(on: channel.localAddress?.port ?? 0) },
            logger: logger)
        let thread = ServerThread()
        let task = Task.detached(executorPreference: thread) {
            do {
                try await app.run()
                start.ended(ConfigurationError("the server stopped"))
            } catch {
                start.ended(error)
            }
        }
        return (start, task, thread)
    }

    /// Stops listening and closes every connection (tests; a worker's server lives as long as
    /// the process).
    public func stop() async {
        task.cancel()
        await task.value
        thread.stop()
    }
}
