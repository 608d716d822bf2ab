#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import Logging
import PushCore
import PushChannels
import PushClientCore
import SwiftPushKit

/// `swiftpush channels create|get|delete|list`: the broadcast channels of an app (iOS 18 Live
/// Activities) on APNs's channel management host, through the Swift API's `APNsClient`. Prints what APNs answered; exit status 0 on
/// success, 1 when APNs refused or could not be reached, 2 for usage errors.
struct ChannelsCommand: StatusCommand {
    static let configuration = CommandConfiguration(
        commandName: "channels",
        abstract: "Create, read, delete and list the broadcast channels of an app (Live Activities).",
        usage: "swiftpush channels create|get|delete|list [options]",
        discussion: """
        create prints the new channel id; get its storage policy; list one id per
        line; delete nothing. Each prints 'apns-request-id=...' on standard error
        (with --json it is in the object). APNs's refusals print 'STATUS REASON'
        (e.g. 400 ChannelNotRegistered) and exit 1.
        example: swiftpush channels create --bundle-id com.example.app \\
                   --key AuthKey_ABC123DEFG.p8 --key-id ABC123DEFG \\
                   --team-id TEAM123456 --sandbox
        """)

    static let actions = ["create", "get", "delete", "list"]

    @Argument(help: ArgumentHelp("what to do: create, get, delete or list", valueName: "action"))
    var action: String?
    @Option(name: .customLong("bundle-id"), help: ArgumentHelp("the app's bundle id (required)", valueName: "ID"))
    var bundleID: String?
    @Option(help: ArgumentHelp("get, delete: the channel id", valueName: "ID"))
    var channel: String?
    @Option(help: ArgumentHelp("create: most-recent (default: keep the last broadcast) or none", valueName: "POLICY"))
    var storage: String?
    @Option(help: ArgumentHelp("the management host (default: Apple's for the environment)", valueName: "HOST"))
    var channelHost: String?
    @Option(help: ArgumentHelp("its port (default: 2196 production, 2195 sandbox)", valueName: "N"))
    var channelPort: Int?
    @OptionGroup(title: "Connection options")
    var connection: ConnectionOptions
    // .unconditional: `--timeout -1` is a value (refused by validate, "must be positive"), not an
    // unknown option -1 that would leave --timeout "missing" its value.
    @Option(parsing: .unconditional, help: ArgumentHelp("how long to wait for the answer (default 30)", valueName: "SECONDS"))
    var timeout: Int?
    @Flag(help: "print one JSON object instead of text")
    var json = false

    func validate() throws(ValidationError) {
        guard let action else { throw ValidationError("say what to do: create, get, delete or list") }
        guard Self.actions.contains(action) else {
            throw ValidationError("unknown action '\(action)' (one of: \(Self.actions.joined(separator: ", ")))")
        }
        if bundleID == nil { throw ValidationError("missing --bundle-id") }
        if (action == "get" || action == "delete") && channel == nil { throw ValidationError("missing --channel") }
        if let storage, !["most-recent", "none"].contains(storage) {
            throw ValidationError("--storage is most-recent or none, got '\(storage)'")
        }
        try checkRange(timeout, "timeout", 1...86_400)
        try checkRange(channelPort, "channel-port", 1...65535)
    }

    func execute() throws(ValidationError) -> Int32 {
        let operation: ChannelRequest.Operation
        switch action! { // validate() checked it
        case "create": operation = .create(storagePolicy: storage == "none" ? 0 : 1)
        case "get": operation = .read(channelId: channel!)
        case "delete": operation = .delete(channelId: channel!)
        default: operation = .list
        }
        do throws(NotificationRules.Violation) {
            _ = try ChannelRequest(operation, bundleId: bundleID!) // a usage error, before connecting
        } catch {
            throw ValidationError(error.message)
        }
        var configuration = try connection.configuration()
        let timeout = Duration.seconds(self.timeout ?? 30)
        configuration.timing.connectTimeout = min(timeout, .seconds(10))
        let apple = ChannelManagementClient.managementEndpoint(forAPNsHost: configuration.environment.host)
        guard let host = channelHost ?? apple?.host else {
            throw ValidationError("--host names no Apple host: give --channel-host (and --channel-port)")
        }
        guard let port = channelPort ?? apple?.port else {
            throw ValidationError("--channel-host names no Apple host: give --channel-port")
        }
        configuration.channelManagement = .custom(host: host, port: port)

        let client: APNsClient
        do throws(PushError) {
            client = try APNsClient(configuration: configuration, logger: Logger(label: "swiftpush", factory: { _ in SwiftLogNoOpLogHandler() }))
        } catch {
            if error.code == .badOption || error.code == .key { throw ValidationError(error.message) }
            Console.err("swiftpush channels: \(error.message)")
            return 1
        }
        let bundleID = bundleID!
        let exchange = waitFor { () async -> Result<(ChannelRequest, ChannelManagementClient.Answer), PushError> in
            do {
                return .success(try await client.channelExchange(operation, bundleID: bundleID, timeout: timeout))
            } catch let error as PushError {
                return .failure(error)
            } catch {
                // Only a cancelled task throws anything else, and this one is never cancelled.
                return .failure(PushError(.internalError, "\(error)"))
            }
        }
        waitFor { await client.shutdown(drain: .zero) }
        switch exchange {
        case .failure(let e):
            Console.err("swiftpush channels: \(e.message)")
            return 1
        case .success(let (request, answer)):
            return Self.report(answer, for: request, json: json)
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
                if let why = ChannelMessages.answeredIdViolation(a.channelId, "APNs created the channel, but its apns-channel-id") {
                    Console.err("swiftpush channels: \(why)")
                    return 1
                }
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
                let ids: [String]
                switch a.body.withUnsafeBytes({ ChannelMessages.channelIds($0) }) {
                case .success(let read): ids = read
                case .failure(let why):
                    Console.err("swiftpush channels: APNs answered with a body that is not a channel list: \(why.message)")
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
