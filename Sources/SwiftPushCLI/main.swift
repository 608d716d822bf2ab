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
    let parsed = try ParsedArguments.parse(arguments.dropFirst(), specs: command.options)
    if parsed.has("help") {
        Console.out(command.usage)
        exit(0)
    }
    exit(try command.run(parsed))
} catch {
    Console.err("swiftpush \(command.name): \(error.message)")
    exit(2)
}
