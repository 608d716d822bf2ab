import ArgumentParser
import PushCore
import PushCrypto
import PushTransport

/// `swiftpush jwt`: prints a provider token (the JWT alone, without "bearer "), e.g. for h2load
/// or curl against the mock.
struct JWTCommand: StatusCommand {
    static let configuration = CommandConfiguration(
        commandName: "jwt",
        abstract: "Print a fresh provider token (JWT) signed with a .p8 key.",
        usage: "swiftpush jwt --key FILE --key-id ID --team-id TEAM [--issued-at SECONDS]",
        discussion: "Use as:\n  authorization: bearer $(swiftpush jwt --key K.p8 --key-id ID --team-id TEAM)")

    @OptionGroup var token: TokenKeyOptions
    @Option(help: ArgumentHelp("iat as UNIX seconds (default now; for expired tokens)", valueName: "SECONDS"))
    var issuedAt: Int64?

    func validate() throws(ValidationError) {
        _ = try token.required()
        if let issuedAt, issuedAt < 0 { throw ValidationError("--issued-at needs UNIX seconds, got '\(issuedAt)'") }
    }

    func execute() throws(ValidationError) -> Int32 {
        let clock: any PushClock = issuedAt.map { ManualClock(wallSeconds: $0) } ?? SystemClock.shared
        let (key, keyID, teamID) = try token.required()
        do {
            let signingKey = try SigningKey(path: key)
            let token = try ProviderToken(key: signingKey, keyID: keyID, teamID: teamID, clock: clock)
            Console.out(String(decoding: token.headerValue.dropFirst("bearer ".utf8.count), as: UTF8.self))
            return 0
        } catch {
            Console.err("swiftpush jwt: \(error)")
            return 1
        }
    }
}
