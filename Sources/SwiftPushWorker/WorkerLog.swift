#if canImport(Glibc)
import Glibc
#endif

/// Structured log lines on standard error (`ts=... level=... msg="..." key=value`), one
/// write per line. Callers pass only names, counts and error texts: never credentials.
public struct WorkerLog: Sendable {
    /// Whether info lines are written (warnings and errors always are).
    public var verbose = true

    /// A log writing info and error lines.
    public init(verbose: Bool = true) { self.verbose = verbose }

    /// An informational line.
    public func info(_ message: String, _ fields: [String: String]) {
        if verbose { write("info", message, fields) }
    }

    /// A warning line (trouble the worker copes with: written even when info lines are not).
    public func warning(_ message: String, _ fields: [String: String]) { write("warning", message, fields) }

    /// An error line.
    public func error(_ message: String, _ fields: [String: String]) { write("error", message, fields) }

    private func write(_ level: String, _ message: String, _ fields: [String: String]) {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        var line = "ts=\(ts.tv_sec).\(String(ts.tv_nsec / 1_000_000).leftPadded(3)) level=\(level) msg=\(Self.quoted(message))"
        for (k, v) in fields.sorted(by: { $0.key < $1.key }) { line += " \(k)=\(Self.quoted(v))" }
        line += "\n"
        _ = line.withCString { Glibc.write(2, $0, strlen($0)) }
    }

    private static func quoted(_ s: String) -> String {
        if !s.isEmpty && !s.contains(where: { $0 == " " || $0 == "\"" || $0 == "=" || $0.isNewline }) { return s }
        return "\"" + s.replacingAll("\\", "\\\\").replacingAll("\"", "\\\"").replacingAll("\n", "\\n") + "\""
    }
}

private extension String {
    func leftPadded(_ width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
    func replacingAll(_ a: Character, _ b: String) -> String {
        var out = ""
        for c in self { if c == a { out += b } else { out.append(c) } }
        return out
    }
}
