#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser

/// A subcommand whose body returns the exit status: 0 success, 1 failure. A usage mistake found
/// while running (an unreadable file, an invalid token) is thrown as a `ValidationError`, which
/// `main` prints as one line and turns into exit status 2, like the mistakes `validate()` finds.
protocol StatusCommand: ParsableCommand {
    func execute() throws(ValidationError) -> Int32
}

extension StatusCommand {
    func run() throws {
        let status = try execute()
        if status != 0 { throw ExitCode(status) }
    }
}

/// Checks that an integer option, when given, lies in `range`.
func checkRange(_ value: Int?, _ name: String, _ range: ClosedRange<Int>) throws(ValidationError) {
    guard let value, !range.contains(value) else { return }
    if range.lowerBound == 1 && value < 1 {
        throw ValidationError("--\(name) must be positive (1...\(range.upperBound)), got '\(value)'")
    }
    throw ValidationError("--\(name) needs an integer in \(range.lowerBound)...\(range.upperBound), got '\(value)'")
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
