/// Device tokens as the status shows them: never in full (a token addresses one person's
/// device), just enough to recognise one in a database.
public enum TokenText {
    /// The first 8 and last 4 characters of a token of 16 or more (a 64-hex-digit APNs token
    /// becomes `00fc13ad…e8f0`); of a shorter (malformed) one, at most its first quarter.
    public static func shortened(_ token: String) -> String {
        let characters = Array(token)
        if characters.count >= 16 {
            return String(characters.prefix(8)) + "…" + String(characters.suffix(4))
        }
        return String(characters.prefix(characters.count / 4)) + "…"
    }
}
