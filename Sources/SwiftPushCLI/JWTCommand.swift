import PushCore
import PushTransport

/// `swiftpush jwt`: prints a provider token (the JWT alone, without "bearer "), e.g. for h2load
/// or curl against the mock.
enum JWTCommand {
    static let subcommand = Subcommand(
        name: "jwt",
        summary: "Print a fresh provider token (JWT) signed with a .p8 key.",
        options: [
            OptionSpec("key", value: "FILE", help: "the .p8 token key, required"),
            OptionSpec("key-id", value: "ID", help: "its key id (kid), required"),
            OptionSpec("team-id", value: "TEAM", help: "the team id (iss), required"),
            OptionSpec("issued-at", value: "SECONDS", help: "iat as UNIX seconds (default now; for expired tokens)"),
        ],
        notes: "Use as: authorization: bearer $(swiftpush jwt --key K.p8 --key-id ID --team-id TEAM)",
        run: run)

    static func run(_ args: ParsedArguments) throws(UsageError) -> Int32 {
        let path = try args.required("key")
        let keyID = try args.required("key-id")
        let teamID = try args.required("team-id")
        var clock: any PushClock = SystemClock.shared
        if let text = args.value("issued-at") {
            guard let iat = Int64(text), iat >= 0 else { throw UsageError("--issued-at needs UNIX seconds, got '\(text)'") }
            clock = ManualClock(wallSeconds: iat)
        }
        do {
            let key = try SigningKey(path: path)
            let token = try ProviderToken(key: key, keyID: keyID, teamID: teamID, clock: clock)
            Console.out(String(decoding: token.headerValue.dropFirst("bearer ".utf8.count), as: UTF8.self))
            return 0
        } catch {
            Console.err("swiftpush jwt: \(error)")
            return 1
        }
    }
}
