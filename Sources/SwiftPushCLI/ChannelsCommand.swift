#if canImport(Glibc)
import Glibc
#endif
import PushCore
import PushTransport

/// `swiftpush channels create|get|delete|list`: the broadcast channels of an app (iOS 18 Live
/// Activities) on APNs's channel management host. Prints what APNs answered; exit status 0 on
/// success, 1 when APNs refused or could not be reached, 2 for usage errors.
enum ChannelsCommand {
    static let subcommand = Subcommand(
        name: "channels",
        summary: "Create, read, delete and list the broadcast channels of an app (Live Activities).",
        options: [
            OptionSpec("bundle-id", value: "ID", help: "the app's bundle id (required)"),
            OptionSpec("channel", value: "ID", help: "get, delete: the channel id"),
            OptionSpec("storage", value: "POLICY", help: "create: most-recent (default: keep the last broadcast) or none"),
            OptionSpec("channel-host", value: "HOST", help: "the management host (default: Apple's for the environment)"),
            OptionSpec("channel-port", value: "N", help: "its port (default: 2196 production, 2195 sandbox)"),
        ] + ConnectionOptions.specs + [
            OptionSpec("timeout", value: "SECONDS", help: "how long to wait for the answer (default 30)"),
            OptionSpec("json", value: nil, help: "print one JSON object instead of text"),
        ],
        notes: """
        create prints the new channel id; get its storage policy; list one id per line; delete
        nothing. Each prints 'apns-request-id=...' on standard error (with --json it is in the object).
        APNs's refusals print 'STATUS REASON' (e.g. 400 ChannelNotRegistered) and exit 1.
        example: swiftpush channels create --bundle-id com.example.app --key AuthKey_ABC123DEFG.p8 \\
                   --key-id ABC123DEFG --team-id TEAM123456 --sandbox
        """,
        run: run,
        actions: ["create", "get", "delete", "list"])

    static func run(_ args: ParsedArguments) throws(UsageError) -> Int32 {
        guard let action = args.action else { throw UsageError("say what to do: create, get, delete or list") }
        let bundle = try args.required("bundle-id")
        let operation: ChannelRequest.Operation
        switch action {
        case "create":
            let storage: Int32
            switch args.value("storage") ?? "most-recent" {
            case "most-recent": storage = 1
            case "none": storage = 0
            case let other: throw UsageError("--storage is most-recent or none, got '\(other)'")
            }
            operation = .create(storagePolicy: storage)
        case "get": operation = .read(channelId: try args.required("channel"))
        case "delete": operation = .delete(channelId: try args.required("channel"))
        default: operation = .list
        }
        let request: ChannelRequest
        do throws(NotificationRules.Violation) {
            request = try ChannelRequest(operation, bundleId: bundle)
        } catch {
            throw UsageError(error.message)
        }
        var configuration = ClientConfiguration()
        try ConnectionOptions.apply(args, to: &configuration)
        let timeout = Int32(try args.integer("timeout", default: 30, in: 1...86_400) * 1000)
        configuration.connectTimeoutMillis = min(Int(timeout), 10_000)
        let apple = ChannelManagementClient.managementEndpoint(forAPNsHost: configuration.host)
        guard let host = args.value("channel-host") ?? apple?.host else {
            throw UsageError("--host names no Apple host: give --channel-host (and --channel-port)")
        }
        let port = try args.integer("channel-port", default: apple?.port ?? 0, in: 1...65535)

        let client: ChannelManagementClient
        do throws(ClientError) {
            client = try ChannelManagementClient(configuration: configuration, host: host, port: port)
        } catch {
            Console.err("swiftpush channels: \(error.description)")
            return 1
        }
        defer { client.close() }
        switch client.send(request, timeoutMillis: timeout) {
        case .failure(let e):
            Console.err("swiftpush channels: \(e.description)")
            return 1
        case .success(let answer):
            return report(answer, for: request, json: args.has("json"))
        }
    }

    /// Prints the answer; returns the exit status.
    private static func report(_ a: ChannelManagementClient.Answer, for request: ChannelRequest, json: Bool) -> Int32 {
        var fields: [(String, String)] = [("status", "\(a.status)"), ("request_id", jsonQuoted(a.requestId))]
        var lines: [String] = []
        if !a.succeeded {
            fields.append(("reason", jsonQuoted(a.reasonText)))
            lines.append("\(a.status) \(a.reasonText)")
        } else {
            switch request.operation {
            case .create:
                fields.append(("channel_id", jsonQuoted(a.channelId)))
                lines.append(a.channelId)
            case .read:
                let policy = a.body.withUnsafeBytes { ChannelMessages.configuration($0) }
                guard case .success(let c) = policy else {
                    Console.err("swiftpush channels: APNs answered with a body that is not a channel configuration")
                    return 1
                }
                fields.append(("storage", jsonQuoted(c.storagePolicy == 1 ? "most-recent" : "none")))
                lines.append(c.storagePolicy == 1 ? "most-recent" : "none")
            case .list:
                guard case .success(let ids) = a.body.withUnsafeBytes({ ChannelMessages.channelIds($0) }) else {
                    Console.err("swiftpush channels: APNs answered with a body that is not a channel list")
                    return 1
                }
                fields.append(("channels", "[" + ids.map(jsonQuoted).joined(separator: ",") + "]"))
                lines.append(contentsOf: ids)
            case .delete:
                break
            }
        }
        if json {
            Console.out("{" + fields.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}")
        } else {
            lines.forEach { Console.out($0) }
            Console.err("apns-request-id=\(a.requestId.isEmpty ? "-" : a.requestId)")
        }
        return a.succeeded ? 0 : 1
    }
}
