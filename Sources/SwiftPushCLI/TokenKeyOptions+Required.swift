import ArgumentParser

extension TokenKeyOptions {
    /// All three, or the usage error naming the first one missing (`jwt` needs a key alone, no
    /// connection).
    func required() throws(ValidationError) -> (key: String, keyID: String, teamID: String) {
        guard let key else { throw ValidationError("missing --key") }
        guard let keyID else { throw ValidationError("missing --key-id") }
        guard let teamID else { throw ValidationError("missing --team-id") }
        return (key, keyID, teamID)
    }
}
