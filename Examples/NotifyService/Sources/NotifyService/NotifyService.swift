import Foundation
import Hummingbird
import Logging
import SwiftPushKit

/// A small HTTP service that sends push notifications: `POST /notify` with
/// `{"token": "<hex>", "alert": "Hello"}` (or `"payload": {...}` for a whole APNs payload,
/// and optionally `"topic"`, `"push_type"`) sends one notification through `APNsClient` and
/// answers with its result as JSON once APNs has answered. A notification APNs rejects is a
/// 200 with `"outcome":"rejected"` (the request itself was fine); a request the rules refuse
/// before sending (a bad token, an oversized payload) is a 400 saying why.
///
/// The APNs client is one of the application's services: on SIGTERM or SIGINT, ServiceLifecycle
/// stops the HTTP server first (requests in progress finish, their notifications included),
/// then shuts the client down, which drains what is still in flight.
///
/// Configuration, from the environment: `APNS_KEY_FILE`, `APNS_KEY_ID`, `APNS_TEAM_ID` (token
/// auth), `APNS_TOPIC` (the app's bundle id), `APNS_HOST`/`APNS_PORT` (default: Apple's
/// sandbox), `APNS_CA_FILE` (default: the system's trust store), `HTTP_PORT` (default 8080;
/// 0: any free port, printed on standard output).
@main
struct NotifyService {
    static func main() async throws {
        let env = ProcessInfo.processInfo.environment
        var logger = Logger(label: "notify-service")
        logger.logLevel = .info

        var configuration = APNsConfiguration(
            environment: env["APNS_HOST"].map { .custom(host: $0, port: Int(env["APNS_PORT"] ?? "") ?? 443) } ?? .sandbox,
            credentials: .tokenKey(file: env["APNS_KEY_FILE"] ?? "AuthKey.p8",
                                   keyID: env["APNS_KEY_ID"] ?? "", teamID: env["APNS_TEAM_ID"] ?? ""),
            defaultTopic: env["APNS_TOPIC"])
        configuration.caFile = env["APNS_CA_FILE"]
        configuration.shutdownDrain = .seconds(10)
        let client = try APNsClient(configuration: configuration, logger: logger)

        let router = Router()
        router.post("notify") { request, context -> NotifyResult in
            let body = try await request.decode(as: NotifyRequest.self, context: context)
            do {
                return NotifyResult(try await client.send(try body.notification()))
            } catch let error as PushError where error.code == .closed {
                throw HTTPError(.serviceUnavailable, message: error.message)
            } catch let error as PushError {
                throw HTTPError(.badRequest, message: error.message) // the notification broke a rule
            }
        }

        let port = Int(env["HTTP_PORT"] ?? "") ?? 8080
        let app = Application(
            router: router,
            configuration: .init(address: .hostname("127.0.0.1", port: port)),
            services: [client], // shut down after the server, so in-flight requests get their results
            onServerRunning: { channel in
                print("notify-service: listening on 127.0.0.1:\(channel.localAddress?.port ?? port)")
                fflush(nil) // every stream: the line goes out now, for whoever waits for it
            },
            logger: logger)
        try await app.runService() // until SIGTERM or SIGINT
    }
}
