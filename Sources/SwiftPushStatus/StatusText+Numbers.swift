#if canImport(Glibc)
import Glibc
#endif

/// How figures read in the terminal: grouped digits, rates, durations, ages, times.
extension StatusText {
    /// `1234567` → `1,234,567`; nil → `-`.
    public static func count(_ n: Int?) -> String {
        guard let n else { return "-" }
        let digits = String(n.magnitude)
        var out = ""
        for (i, c) in digits.enumerated() {
            if i > 0 && (digits.count - i) % 3 == 0 { out.append(",") }
            out.append(c)
        }
        return (n < 0 ? "-" : "") + out
    }

    /// Per second: one decimal under 10, whole numbers above; nil → `-`.
    public static func rate(_ r: Double?) -> String {
        guard let r else { return "-" }
        return r < 10 ? String(Int((r * 10).rounded()) / 10) + "." + String(Int((r * 10).rounded()) % 10) + "/s"
                      : count(Int(r.rounded())) + "/s"
    }

    /// A time left: `done` at 0, `42s`, `3m 05s`, `2h 03m`, `>99h`; nil → `-`.
    public static func duration(_ seconds: Double?) -> String {
        guard let seconds else { return "-" }
        if seconds <= 0 { return "done" }
        let s = Int(seconds.rounded(.up))
        if s < 60 { return "\(s)s" }
        if s < 3600 { return "\(s / 60)m \(pad(s % 60))s" }
        if s < 100 * 3600 { return "\(s / 3600)h \(pad(s % 3600 / 60))m" }
        return ">99h"
    }

    /// An age in milliseconds: `0.4s`, `12s`, `3m`, `2h`, `4d`.
    public static func age(_ millis: Int) -> String {
        if millis < 10_000 { return String(millis / 1000) + "." + String(millis % 1000 / 100) + "s" }
        let s = millis / 1000
        if s < 120 { return "\(s)s" }
        if s < 7200 { return "\(s / 60)m" }
        if s < 172_800 { return "\(s / 3600)h" }
        return "\(s / 86_400)d"
    }

    /// A fraction as a percentage with one decimal: `48.2%`; nil → `-`.
    public static func percent(_ fraction: Double?) -> String {
        guard let fraction else { return "-" }
        let tenths = Int((fraction * 1000).rounded(.down))
        return "\(tenths / 10).\(tenths % 10)%"
    }

    /// UNIX ms as `2026-11-20 01:02:03 UTC`.
    public static func utc(_ millis: Int) -> String {
        var t = time_t(millis / 1000)
        var parts = tm()
        gmtime_r(&t, &parts)
        return "\(parts.tm_year + 1900)-\(pad(Int(parts.tm_mon) + 1))-\(pad(Int(parts.tm_mday))) "
            + "\(pad(Int(parts.tm_hour))):\(pad(Int(parts.tm_min))):\(pad(Int(parts.tm_sec))) UTC"
    }

    /// A progress bar of `width` cells (`█` done, `░` not), empty when the fraction is unknown.
    public static func bar(_ fraction: Double?, width: Int) -> String {
        let filled = fraction.map { min(width, max(0, Int(($0 * Double(width)).rounded(.down)))) } ?? 0
        return "[" + String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled) + "]"
    }

    private static func pad(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
}
