#if canImport(Glibc)
import Glibc
#endif

/// A subcommand of `swiftpush`: its name, what it does, its options and its body. New
/// subcommands (`send`, `bench`) are one more entry in `Subcommand.all`.
struct Subcommand: Sendable {
    /// The word after `swiftpush`.
    let name: String
    /// One line for the command list.
    let summary: String
    /// The options it accepts.
    let options: [OptionSpec]
    /// Extra usage text printed after the options (may be empty).
    let notes: String
    /// Runs with the parsed options; returns the exit status.
    let run: @Sendable (ParsedArguments) throws(UsageError) -> Int32
    /// The words that may follow the name (`channels create`), given to `run` as
    /// `ParsedArguments.action`; empty for commands without them.
    var actions: [String] = []

    /// Every subcommand, in the order `--help` lists them.
    static let all: [Subcommand] = [SendCommand.subcommand, BenchCommand.subcommand, MockCommand.subcommand, JWTCommand.subcommand,
                                   WorkerCommand.subcommand, EnqueueCommand.subcommand, OutcomesCommand.subcommand,
                                   ChannelsCommand.subcommand]

    /// The usage text for this subcommand.
    var usage: String {
        let words = actions.isEmpty ? "" : " " + actions.joined(separator: "|")
        var s = "usage: swiftpush \(name)\(words) [options]\n\n\(summary)\n\noptions:\n"
        let rows = options.map { o -> (String, String) in
            var left = "  --\(o.name)"
            if let v = o.valueName { left += " \(v)" }
            return (left, o.help + (o.repeatable ? " (repeatable)" : ""))
        } + [("  -h, --help", "show this help")]
        let width = rows.map(\.0.count).max() ?? 0
        for (left, right) in rows {
            s += left + String(repeating: " ", count: width - left.count + 2) + right + "\n"
        }
        if !notes.isEmpty { s += "\n" + notes + "\n" }
        return s
    }

    /// The top-level usage text.
    static var topUsage: String {
        var s = "usage: swiftpush <command> [options]\n\ncommands:\n"
        let width = all.map(\.name.count).max() ?? 0
        for c in all {
            s += "  \(c.name)" + String(repeating: " ", count: width - c.name.count + 2) + c.summary + "\n"
        }
        s += "\nRun 'swiftpush <command> --help' for a command's options.\n"
        return s
    }
}

/// Output helpers: stdout is flushed at once (scripts wait for lines such as "listening on").
enum Console {
    /// Prints a line on stdout and flushes.
    static func out(_ line: String) {
        print(line)
        fflush(nil)
    }

    /// Prints a line on stderr.
    static func err(_ line: String) {
        let text = line + "\n"
        _ = text.withCString { write(2, $0, strlen($0)) }
    }
}
