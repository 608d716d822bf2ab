import ArgumentParser

/// `--key FILE --key-id ID --team-id TEAM`: a token signing key (.p8) and who it belongs to.
/// Shared by `jwt`, `bench` (without --pki) and, through ConnectionOptions, `send` and `channels`.
struct TokenKeyOptions: ParsableArguments {
    @Option(help: ArgumentHelp("token auth: the .p8 key (AuthKey_XXXXXXXXXX.p8)", valueName: "FILE"))
    var key: String?
    @Option(name: .customLong("key-id"), help: ArgumentHelp("token auth: the key id (kid)", valueName: "ID"))
    var keyID: String?
    @Option(name: .customLong("team-id"), help: ArgumentHelp("token auth: the team id (iss)", valueName: "TEAM"))
    var teamID: String?

    /// Whether any of the three is given.
    var isEmpty: Bool { key == nil && keyID == nil && teamID == nil }

    /// All three, or the usage error naming the first one missing.
    func required() throws(ValidationError) -> (key: String, keyID: String, teamID: String) {
        guard let key else { throw ValidationError("missing --key") }
        guard let keyID else { throw ValidationError("missing --key-id") }
        guard let teamID else { throw ValidationError("missing --team-id") }
        return (key, keyID, teamID)
    }
}
