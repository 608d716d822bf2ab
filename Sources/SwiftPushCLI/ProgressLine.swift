#if canImport(Glibc)
import Glibc
#endif
import PushCore

/// A progress line on a terminal's standard error for a long command (`send --tokens-file`,
/// `bench`; `enqueue` may use it the same way): how many of how many, the rate and the time
/// left, redrawn in place at most every `interval`, and left on the screen at the end with the
/// final figures. It shows nothing when standard error is not a terminal, when the total is at
/// most `threshold` (a few notifications need no progress), or when `quiet` (--quiet).
///
/// ```swift
/// var progress = ProgressLine(total: tokens.count, quiet: quiet)
/// for ... { progress.update(done: printed) }
/// progress.finish(done: printed)
/// ```
struct ProgressLine {
    /// Inputs above this many get a progress line.
    static let defaultThreshold = 5000
    /// The most the line is redrawn: five times a second.
    static let interval: UInt64 = 200_000_000

    let total: Int
    /// Whether anything is drawn at all.
    let isShown: Bool
    /// Whether standard output is the same kind of terminal: then a line printed there first
    /// clears the progress line (`willPrint`), or the two would share a row.
    private let stdoutIsTerminal: Bool
    private let now: () -> UInt64
    private let start: UInt64
    private var lastDraw: UInt64 = 0
    private var onScreen = false

    /// A progress line for `total` items. `isTerminal`, `stdoutIsTerminal` and `now` are
    /// standard error's, standard output's and the monotonic clock unless a test says otherwise.
    init(total: Int, quiet: Bool, threshold: Int = ProgressLine.defaultThreshold,
         isTerminal: Bool = isatty(2) != 0, stdoutIsTerminal: Bool = isatty(1) != 0,
         now: @escaping () -> UInt64 = MonotonicTime.nanos) {
        self.total = total
        isShown = !quiet && isTerminal && total > threshold
        self.stdoutIsTerminal = stdoutIsTerminal
        self.now = now
        start = now()
    }

    /// Redraws the line when it is due (at once the first time).
    mutating func update(done: Int) {
        guard isShown else { return }
        let t = now()
        guard lastDraw == 0 || t - lastDraw >= Self.interval else { return }
        draw(done: done, at: t)
    }

    /// Call before printing a line on standard output: clears the progress line if both share
    /// the terminal (it is drawn again at the next `update`).
    mutating func willPrint() {
        guard onScreen && stdoutIsTerminal else { return }
        write("\r\u{1B}[K")
        onScreen = false // drawn again at the first update after the interval
    }

    /// Draws the final figures and ends the line.
    mutating func finish(done: Int) {
        guard isShown else { return }
        draw(done: done, at: now())
        write("\n")
        onScreen = false
    }

    private mutating func draw(done: Int, at t: UInt64) {
        write("\r\u{1B}[K" + Self.render(done: done, total: total, elapsedNanos: t - start))
        lastDraw = t
        onScreen = true
    }

    /// The line: "swiftpush: 12000/50000 (24%), 3100/s, 13s left" ("...left" is "?" until
    /// something is done).
    static func render(done: Int, total: Int, elapsedNanos: UInt64) -> String {
        let seconds = Double(elapsedNanos) / 1e9
        let rate = seconds > 0 ? Double(done) / seconds : 0
        let percent = total > 0 ? done * 100 / total : 100
        let left: String
        if done >= total {
            left = "done in \(duration(seconds))"
        } else if rate > 0 {
            left = "\(duration(Double(total - done) / rate)) left"
        } else {
            left = "? left"
        }
        return "swiftpush: \(done)/\(total) (\(percent)%), \(Int(rate.rounded()))/s, \(left)"
    }

    /// "42s", "3m05s", "2h01m".
    static func duration(_ seconds: Double) -> String {
        let s = Int(seconds.rounded(.up))
        if s < 60 { return "\(s)s" }
        if s < 3600 { return "\(s / 60)m" + (s % 60 < 10 ? "0" : "") + "\(s % 60)s" }
        return "\(s / 3600)h" + (s / 60 % 60 < 10 ? "0" : "") + "\(s / 60 % 60)m"
    }

    private func write(_ text: String) {
        _ = text.withCString { Glibc.write(2, $0, strlen($0)) }
    }
}
