#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import PushCore

// swiftpush: the command-line tool. `swiftpush <command> [options]`. Exit status: 0 success,
// 1 failure, 2 usage error (ArgumentParser's own is 64, EX_USAGE; the README and the scripts that
// call swiftpush rely on 2).

/// The root command: only the list of subcommands.
struct SwiftPushTool: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "swiftpush",
        abstract: "Send Apple Push Notification service (APNs) notifications, run a mock APNs server.",
        usage: "swiftpush <command> [options]",
        discussion: "Run 'swiftpush <command> --help' for a command's options. Exit status: 0 success, 1 failure, 2 usage error.",
        // The release's version (the file VERSION, through scripts/gen_version.py): `swiftpush --version`.
        version: swiftpushVersion.description,
        // Synchronous commands (not AsyncParsableCommand): mock and worker block SIGINT/SIGTERM in
        // the main thread before starting threads, and an async main would have started the
        // concurrency pool's threads without that mask.
        subcommands: [SendCommand.self, BenchCommand.self, MockCommand.self, JWTCommand.self,
                      WorkerCommand.self, EnqueueCommand.self, OutcomesCommand.self, FleetStatusCommand.self, ChannelsCommand.self,
                      CampaignCommand.self])
}

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.isEmpty {
    Console.err(SwiftPushTool.helpMessage())
    exit(2)
}
/// "swiftpush send" when the first word names a command, for the one-line error messages.
let prefix = SwiftPushTool.configuration.subcommands.map { $0.configuration.commandName ?? "" }
    .first { $0 == arguments[0] }.map { "swiftpush \($0)" } ?? "swiftpush"
do {
    var command = try SwiftPushTool.parseAsRoot(arguments)
    try command.run()
    exit(0)
} catch let error as ValidationError {
    // Thrown by a command's body: a mistake found while reading its files or values.
    Console.err("\(prefix): \(error.message)")
    exit(2)
} catch {
    guard SwiftPushTool.exitCode(for: error) == .validationFailure else { SwiftPushTool.exit(withError: error) }
    Console.err("\(prefix): \(SwiftPushTool.message(for: error)) (try '\(prefix) --help')")
    exit(2)
}
