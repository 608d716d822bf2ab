import PushClientMachine
import PushCore
import PushCrypto
import PushTransport

extension ClientConfiguration.Credentials {
    /// How these credentials authenticate, checked the one way every client of APNs checks them
    /// (the notification client, `PushClient`, and the channel management client): exactly one
    /// of a token key (with its key id and team id) or a client certificate. Returns the
    /// provider token that signs requests, or nil for certificate authentication (TLS does it).
    ///
    /// Errors are `.key` errors naming the option to set, so that a C caller, the CLI and the
    /// Swift API all read the same sentence for the same mistake (issue 34: the two clients
    /// each had their own copy of this, with different words).
    package func providerToken(clock: any PushClock) throws(ClientError) -> ProviderToken? {
        if tokenKey != nil && clientCertificate != nil {
            throw ClientError(.key, "both a token key and a client certificate are set: choose one authentication")
        }
        guard let pem = tokenKey else {
            if clientCertificate != nil { return nil }
            throw ClientError(.key, "no credentials: set a token key (PUSH_OPT_TOKEN_KEY_FILE, PUSH_OPT_KEY_ID, PUSH_OPT_TEAM_ID) or a client certificate (PUSH_OPT_CERT_FILE or PUSH_OPT_P12_FILE)")
        }
        guard !keyID.isEmpty else { throw ClientError(.key, "token auth needs the key id (PUSH_OPT_KEY_ID)") }
        guard !teamID.isEmpty else { throw ClientError(.key, "token auth needs the team id (PUSH_OPT_TEAM_ID)") }
        do {
            return try ProviderToken(key: try SigningKey(pem: pem), keyID: keyID, teamID: teamID, clock: clock)
        } catch let e as SigningKey.LoadError {
            throw ClientError(.key, "token key: \(e.description)")
        } catch let e as ProviderToken.SignError {
            throw ClientError(.key, e.description)
        } catch {
            throw ClientError(.key, "token key: \(error)")
        }
    }
}
