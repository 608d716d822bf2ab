#if canImport(Glibc)
import Glibc
#endif

// swiftpush: the command-line tool. `swiftpush <command> [options]`; commands are listed in
// `Subcommand.all`. Exit status: 0 success, 1 failure, 2 usage error.

let arguments = CommandLine.arguments.dropFirst()

guard let word = arguments.first else {
    Console.err(Subcommand.topUsage)
    exit(2)
}
if word == "--help" || word == "-h" || word == "help" {
    Console.out(Subcommand.topUsage)
    exit(0)
}
guard let command = Subcommand.all.first(where: { $0.name == word }) else {
    Console.err("swiftpush: unknown command '\(word)' (try 'swiftpush --help')")
    exit(2)
}
do throws(UsageError) {
    var rest = arguments.dropFirst()
    var action: String?
    if !command.actions.isEmpty, let word = rest.first, !word.hasPrefix("-") {
        guard command.actions.contains(word) else {
            throw UsageError("unknown action '\(word)' (one of: \(command.actions.joined(separator: ", ")))")
        }
        action = word
        rest = rest.dropFirst()
    }
    var parsed = try ParsedArguments.parse(rest, specs: command.options)
    parsed.action = action
    if parsed.has("help") {
        Console.out(command.usage)
        exit(0)
    }
    exit(try command.run(parsed))
} catch {
    Console.err("swiftpush \(command.name): \(error.message)")
    exit(2)
}
