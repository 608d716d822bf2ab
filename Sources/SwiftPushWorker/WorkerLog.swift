#if canImport(Glibc)
import Glibc
#endif
import SwiftPushWorkerMachine

/// Structured log lines on standard error, one format for every line the worker writes:
/// logfmt (`ts=2026-11-28T20:33:35.123Z level=info msg="..." key=value`), the time in RFC 3339,
/// UTC, with milliseconds, one write per line. Callers pass only names, counts and error
/// texts: never credentials.
public struct WorkerLog: Sendable {
    /// Whether info lines are written (warnings and errors always are).
    public var verbose = true
    /// Where each line's time comes from: the system clocks, until a `WorkerDriver` puts the
    /// log on its own clock (`WorkerClock`), so that a worker on another clock writes its times
    /// (issue 34: the log read CLOCK_REALTIME itself).
    public var clock: WorkerClock = WorkerTime.system
    /// Where each line goes, newline included: standard error, in one write (tests keep them).
    let output: @Sendable (String) -> Void

    /// A log writing info and error lines.
    public init(verbose: Bool = true) { self.init(verbose: verbose, output: Self.standardError) }

    /// A log writing its lines to `output` (tests).
    init(verbose: Bool, output: @escaping @Sendable (String) -> Void) {
        self.verbose = verbose
        self.output = output
    }

    /// One write of `line` to standard error.
    private static func standardError(_ line: String) {
        _ = line.withCString { Glibc.write(2, $0, strlen($0)) }
    }

    /// An informational line.
    public func info(_ message: String, _ fields: [String: String]) {
        if verbose { write("info", message, fields) }
    }

    /// What the worker is and where it listens, at its start: an info line written even when
    /// other info lines are not (`--quiet`), since tests and operators find the worker's
    /// consumer name and its HTTP port there.
    public func started(_ message: String, _ fields: [String: String]) { write("info", message, fields) }

    /// A warning line (trouble the worker copes with: written even when info lines are not).
    public func warning(_ message: String, _ fields: [String: String]) { write("warning", message, fields) }

    /// An error line.
    public func error(_ message: String, _ fields: [String: String]) { write("error", message, fields) }

    private func write(_ level: String, _ message: String, _ fields: [String: String]) {
        let wall = clock().wallMillis
        output(Self.line(seconds: Int(wall / 1000), millis: Int(wall % 1000), level: level, message: message, fields) + "\n")
    }

    /// One line without its newline: the time, the level, the message, then the fields sorted
    /// by name; a value with a space, `"`, `=` or a line break (or an empty one) quoted.
    static func line(seconds: Int, millis: Int, level: String, message: String, _ fields: [String: String]) -> String {
        var line = "ts=\(timestamp(seconds: seconds, millis: millis)) level=\(level) msg=\(quoted(message))"
        for (k, v) in fields.sorted(by: { $0.key < $1.key }) { line += " \(k)=\(quoted(v))" }
        return line
    }

    /// `2026-11-28T20:33:35.123Z`: RFC 3339, UTC, milliseconds.
    static func timestamp(seconds: Int, millis: Int) -> String {
        var t = time_t(seconds)
        var parts = tm()
        gmtime_r(&t, &parts)
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let ms = millis < 10 ? "00\(millis)" : millis < 100 ? "0\(millis)" : "\(millis)"
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)).\(ms)Z"
    }

    private static func quoted(_ s: String) -> String {
        if !s.isEmpty && !s.contains(where: { $0 == " " || $0 == "\"" || $0 == "=" || $0.isNewline }) { return s }
        return "\"" + s.replacingAll("\\", "\\\\").replacingAll("\"", "\\\"").replacingAll("\n", "\\n") + "\""
    }
}

private extension String {
    func replacingAll(_ a: Character, _ b: String) -> String {
        var out = ""
        for c in self { if c == a { out += b } else { out.append(c) } }
        return out
    }
}
