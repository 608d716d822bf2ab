import ArgumentParser
import Foundation

/// `swiftpush enqueue --at`: a time to hold the notifications until (docs/worker.md,
/// "Scheduled sending").
extension EnqueueCommand {
    /// `--at` as UNIX milliseconds (nil without it): an RFC 3339 time or a number of
    /// milliseconds. A time not in the future is refused: such a notification would be sent at
    /// once, which is not what a schedule asks for.
    func sendAtMillis(now: Date = Date()) throws(ValidationError) -> Int64? {
        guard let at else { return nil }
        guard let millis = Self.parseTime(at) else {
            throw ValidationError("--at \(at): not an RFC 3339 time (2026-12-01T09:00:00Z, 2026-12-01T10:00:00.5+01:00) nor UNIX milliseconds")
        }
        let nowMillis = Int64((now.timeIntervalSince1970 * 1000).rounded(.down))
        if millis <= nowMillis {
            throw ValidationError("--at \(at) is in the past (\(nowMillis - millis) ms ago): give a time to come, or leave --at out to send now")
        }
        return millis
    }

    /// `text` as UNIX ms: digits, or an RFC 3339 time with or without fractional seconds.
    static func parseTime(_ text: String) -> Int64? {
        if !text.isEmpty, text.allSatisfy(\.isASCIIDigit) { return Int64(text) }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let d = formatter.date(from: text) { return Int64((d.timeIntervalSince1970 * 1000).rounded()) }
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.date(from: text).map { Int64(($0.timeIntervalSince1970 * 1000).rounded()) }
    }
}

private extension Character {
    /// 0-9.
    var isASCIIDigit: Bool { isASCII && isNumber }
}
