#if canImport(Glibc)
import Glibc
#endif
import APNsMock

extension MockCommand {
    /// The variables the README's examples and Examples/NotifyService read, for a mock on
    /// `port` serving `pki`. The host is "localhost": the name the quickstart certificate has.
    static func quickstartExports(_ pki: QuickstartPKI, port: Int) -> [(name: String, value: String)] {
        [("APNS_HOST", "localhost"), ("APNS_PORT", "\(port)"), ("APNS_CA_FILE", pki.caFile),
         ("APNS_KEY_FILE", pki.tokenKeyFile), ("APNS_KEY_ID", QuickstartPKI.keyID),
         ("APNS_TEAM_ID", QuickstartPKI.teamID), ("APNS_TOPIC", QuickstartPKI.topic)]
    }

    /// Writes DIR/env.sh, then prints how to use it and the same exports (to paste instead).
    /// env.sh is written once the server listens, so a script may wait for it to appear; it is
    /// rewritten at each start (the port changes). False, with a message, when it cannot be.
    static func announce(_ pki: QuickstartPKI, port: Int) -> Bool {
        let env = pki.directory + "/env.sh"
        let exports = quickstartExports(pki, port: port).map { "export \($0.name)=\(shellQuoted($0.value))" }
        let text = ["# Written by `swiftpush mock --quickstart` for the mock it started on port \(port);",
                    "# rewritten at each start. Use: . \(shellQuoted(env))"] + exports
        guard writeFile(env, text.joined(separator: "\n") + "\n") else {
            Console.err("swiftpush mock: cannot write \(env): \(String(cString: strerror(errno)))")
            return false
        }
        let made = pki.madeCertificates ? "a new test CA, server certificate" : "the test CA and server certificate kept there"
        Console.out("quickstart: \(made) and token key \(QuickstartPKI.keyID) (team \(QuickstartPKI.teamID)) in \(pki.directory)")
        Console.out("quickstart: in another shell, . \(shellQuoted(env)) (the examples open AuthKey_\(QuickstartPKI.keyID).p8 in the current directory), or:")
        exports.forEach(Console.out)
        return true
    }

    /// `value` as one shell word: bare when it holds only characters no shell interprets.
    static func shellQuoted(_ value: String) -> String {
        let plain = !value.isEmpty && value.utf8.allSatisfy { c in
            (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || "/._-+:,=@%".utf8.contains(c)
        }
        return plain ? value : "'" + value.split(separator: "'", omittingEmptySubsequences: false).joined(separator: #"'\''"#) + "'"
    }
}
