/// A small command-line parser: `--name value`, `--name=value` and `--flag`, no positionals.
/// Hand-written so that the CLI depends on nothing but the project's own targets.

/// An option a subcommand accepts.
struct OptionSpec: Sendable {
    /// The name without dashes, e.g. `"cert"` for `--cert`.
    let name: String
    /// The placeholder shown in usage for the value; nil for a flag without a value.
    let valueName: String?
    /// Whether it may be given more than once (values are kept in order).
    let repeatable: Bool
    /// One line of help.
    let help: String

    init(_ name: String, value: String? = nil, repeatable: Bool = false, help: String) {
        self.name = name
        self.valueName = value
        self.repeatable = repeatable
        self.help = help
    }
}

/// A mistake on the command line: printed as one line, exit status 2.
struct UsageError: Error, Sendable {
    let message: String
    init(_ message: String) { self.message = message }
}

/// The options found on a command line.
struct ParsedArguments {
    private(set) var values: [String: [String]] = [:]
    private(set) var flags: Set<String> = []
    /// The word after the command name, for commands with actions (`Subcommand.actions`).
    var action: String?

    /// The value of a single-valued option, if given.
    func value(_ name: String) -> String? { values[name]?.last }
    /// Every value of a repeatable option, in order.
    func all(_ name: String) -> [String] { values[name] ?? [] }
    /// Whether a flag was given.
    func has(_ name: String) -> Bool { flags.contains(name) }

    /// A required single-valued option.
    func required(_ name: String) throws(UsageError) -> String {
        guard let v = value(name) else { throw UsageError("missing --\(name)") }
        return v
    }

    /// An integer option within `range`, or `defaultValue` when absent.
    func integer(_ name: String, default defaultValue: Int, in range: ClosedRange<Int>) throws(UsageError) -> Int {
        guard let text = value(name) else { return defaultValue }
        guard let n = Int(text), range.contains(n) else {
            throw UsageError("--\(name) needs an integer in \(range.lowerBound)...\(range.upperBound), got '\(text)'")
        }
        return n
    }

    /// Parses `arguments` against `specs`; `--help`/`-h` is always accepted as a flag.
    static func parse(_ arguments: ArraySlice<String>, specs: [OptionSpec]) throws(UsageError) -> ParsedArguments {
        var result = ParsedArguments()
        var i = arguments.startIndex
        while i < arguments.endIndex {
            let arg = arguments[i]
            i += 1
            if arg == "-h" || arg == "--help" {
                result.flags.insert("help")
                continue
            }
            if arg == "-v", specs.contains(where: { $0.name == "verbose" }) {
                result.flags.insert("verbose") // the one short form besides -h
                continue
            }
            guard arg.hasPrefix("--"), arg.count > 2 else { throw UsageError("unexpected argument '\(arg)'") }
            var name = String(arg.dropFirst(2))
            var inlineValue: String?
            if let eq = name.firstIndex(of: "=") {
                inlineValue = String(name[name.index(after: eq)...])
                name = String(name[..<eq])
            }
            guard let spec = specs.first(where: { $0.name == name }) else { throw UsageError("unknown option --\(name)") }
            if spec.valueName == nil {
                if inlineValue != nil { throw UsageError("--\(name) takes no value") }
                result.flags.insert(name)
                continue
            }
            let value: String
            if let inlineValue {
                value = inlineValue
            } else {
                guard i < arguments.endIndex else { throw UsageError("--\(name) needs a value") }
                value = arguments[i]
                i += 1
            }
            if !spec.repeatable, result.values[name] != nil { throw UsageError("--\(name) given twice") }
            result.values[name, default: []].append(value)
        }
        return result
    }
}
