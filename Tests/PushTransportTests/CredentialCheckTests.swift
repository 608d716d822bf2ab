import Testing
import PushCore
@testable import PushClientCore
@testable import PushChannels
@testable import PushTransport

/// The two clients of APNs (notifications and channel management) check their credentials
/// through one function (`Credentials.providerToken`): the same mistake gets the same error,
/// word for word, from either (issue 34, item 4; they used to say it differently).
@Suite("One credential check for both clients")
struct CredentialCheckTests {
    let support = ClientTestSupport()

    /// Each mistake, made on an otherwise good configuration, and the words its error must hold.
    static let mistakes: [(name: String, words: String, change: @Sendable (inout ClientConfiguration) -> Void)] = [
        ("no key id", "PUSH_OPT_KEY_ID", { $0.credentials.keyID = "" }),
        ("no team id", "PUSH_OPT_TEAM_ID", { $0.credentials.teamID = "" }),
        ("no credentials", "no credentials", { $0.credentials.tokenKey = nil }),
        ("a key that is not PEM", "token key", { $0.credentials.tokenKeyPEM = Array("not a key".utf8) }),
        ("both a key and a certificate", "choose one", {
            $0.credentials.clientCertificate = .pem(certificateFile: "/nonexistent.pem", keyFile: "/nonexistent.pem")
        }),
    ]

    @Test("Every credential mistake is the same .key error from the notification client and the channel management client",
          arguments: 0..<mistakes.count)
    func sameError(_ index: Int) throws {
        let mistake = Self.mistakes[index]
        var c = try support.configuration(port: 443, connections: 1)
        mistake.change(&c)
        let fromPushClient = #expect(throws: ClientError.self, "\(mistake.name)") { _ = try PushClient(configuration: c) }
        let fromChannels = #expect(throws: ClientError.self, "\(mistake.name)") {
            _ = try ChannelManagementClient(configuration: c, host: "localhost", port: 443)
        }
        #expect(fromPushClient?.status == .key && fromChannels?.status == .key, "\(mistake.name)")
        #expect(fromPushClient?.description == fromChannels?.description, "\(mistake.name)")
        #expect(fromPushClient?.description.contains(mistake.words) == true, "\(mistake.name): \(String(describing: fromPushClient))")
    }

    @Test("Good token credentials give a token; certificate credentials none (TLS authenticates)")
    func goodCredentials() throws {
        let c = try support.configuration(port: 443, connections: 1)
        #expect(try c.credentials.providerToken(clock: SystemClock.shared) != nil)
        var certificate = ClientConfiguration.Credentials()
        certificate.clientCertificate = .pem(certificateFile: support.pki + "/client.pem", keyFile: support.pki + "/client.key")
        #expect(try certificate.providerToken(clock: SystemClock.shared) == nil)
    }
}
