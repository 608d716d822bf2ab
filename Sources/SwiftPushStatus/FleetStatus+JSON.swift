import Foundation

/// The view as one JSON object (`status --json`, `/status.json`, the page's live events).
extension FleetStatus {
    /// One line of JSON, keys sorted (stable for scripts and tests).
    public func json() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Every member is a plain value: encoding cannot fail; an empty object says so if it did.
        guard let data = try? encoder.encode(self) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }
}
