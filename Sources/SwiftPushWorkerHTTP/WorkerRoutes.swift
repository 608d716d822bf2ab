import Hummingbird
import SwiftPushStatus
import SwiftPushWorker

/// What the worker's HTTP server answers (all GET, all read-only):
///
/// | path | what |
/// | --- | --- |
/// | `/metrics` | Prometheus text (`WorkerMetrics`) |
/// | `/healthz` | 200 `ok` while the worker's loop runs; 503 when it has been stuck for 10 s |
/// | `/` | the status page (`StatusPage`) |
/// | `/status.json` | the status as one JSON object (`FleetStatus`) |
/// | `/events` | the same, as server-sent events, one per read while the client stays |
///
/// `/status.json`, `/events` and `/` take `?campaign=NAME` and `?shards=A,B`: an unknown
/// campaign or shard is an empty view, never an error.
public struct WorkerRoutes: Sendable {
    /// `/metrics` and `/healthz`.
    public var metrics: WorkerMetrics
    /// The fleet's status.
    public var feed: StatusFeed
    /// This worker's own figures for the page; nil: not a worker (the view has none).
    public var thisWorker: @Sendable () -> LocalWorkerStatus?
    /// How long the loop may go without publishing before `/healthz` fails.
    public var liveWithinMillis: UInt64 = 10_000

    /// Routes over these parts.
    public init(metrics: WorkerMetrics, feed: StatusFeed, thisWorker: @escaping @Sendable () -> LocalWorkerStatus?) {
        self.metrics = metrics
        self.feed = feed
        self.thisWorker = thisWorker
    }

    /// The router.
    func router() -> Router<BasicRequestContext> {
        let router = Router()
        router.get("/metrics") { _, _ in
            Self.text(metrics.render(), type: "text/plain; version=0.0.4")
        }
        router.get("/healthz") { _, _ in
            metrics.isLive(withinMillis: liveWithinMillis)
                ? Self.text("ok\n") : Self.text("the worker loop is stuck\n", status: .serviceUnavailable)
        }
        router.get("/") { _, _ in
            var headers = HTTPFields()
            headers[.contentType] = "text/html; charset=utf-8"
            headers[.cacheControl] = "no-store"
            // The page is self-contained: the browser is told to fetch nothing from elsewhere.
            headers[.contentSecurityPolicy] = StatusPage.contentSecurityPolicy
            headers[.xContentTypeOptions] = "nosniff"
            return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: StatusPage.html)))
        }
        router.get("/status.json") { request, _ in
            let focus = Self.focus(request)
            guard let snapshot = await feed.current() else {
                return Self.text("{\"error\":\"no status read yet\"}\n", type: "application/json", status: .serviceUnavailable)
            }
            return Self.text(view(snapshot, focus).json() + "\n", type: "application/json")
        }
        router.get("/events") { request, _ in
            let focus = Self.focus(request)
            let updates = feed.updates()
            var headers = HTTPFields()
            headers[.contentType] = "text/event-stream"
            headers[.cacheControl] = "no-store"
            return Response(status: .ok, headers: headers, body: ResponseBody { writer in
                for await snapshot in updates {
                    try await writer.write(ByteBuffer(string: "data: " + view(snapshot, focus).json() + "\n\n"))
                }
                try await writer.finish(nil)
            })
        }
        return router
    }

    /// `snapshot` through `focus`, with this worker's own figures.
    private func view(_ snapshot: StatusSnapshot, _ focus: StatusFocus) -> FleetStatus {
        var status = FleetStatus(snapshot, focus: focus)
        status.thisWorker = thisWorker()
        return status
    }

    /// The focus a request's query asks for: `campaign`, `shards` (comma-separated); empty
    /// values are no focus.
    static func focus(_ request: Request) -> StatusFocus {
        let query = request.uri.queryParameters
        let campaign = query["campaign"].map(String.init).flatMap { $0.isEmpty ? nil : $0 }
        let shards = query["shards"].map { $0.split(separator: ",").map(String.init) }.flatMap { $0.isEmpty ? nil : $0 }
        return StatusFocus(campaign: campaign, shards: shards)
    }

    private static func text(_ body: String, type: String = "text/plain; charset=utf-8", status: HTTPResponse.Status = .ok) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = type
        headers[.cacheControl] = "no-store"
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: body)))
    }
}
