#if canImport(Glibc)
import Glibc
#endif
import PushCore
import PushTransport

/// The options that say how to reach APNs and who we are: credentials (token key or client
/// certificate) and destination (environment or host, port, CA file). Shared by `send` and
/// `channels`, so both take the same flags and check them the same way.
enum ConnectionOptions {
    /// The option specs, in the order `--help` lists them.
    static let specs: [OptionSpec] = [
        OptionSpec("key", value: "FILE", help: "token auth: the .p8 key (AuthKey_XXXXXXXXXX.p8)"),
        OptionSpec("key-id", value: "ID", help: "token auth: the key id"),
        OptionSpec("team-id", value: "TEAM", help: "token auth: the team id"),
        OptionSpec("cert", value: "FILE", help: "certificate auth: PEM certificate (and its key, unless --cert-key)"),
        OptionSpec("cert-key", value: "FILE", help: "certificate auth: the PEM private key of --cert"),
        OptionSpec("p12", value: "FILE", help: "certificate auth: a .p12 file holding certificate and key"),
        OptionSpec("password", value: "PASSWORD", help: "password of the .p12 file"),
        OptionSpec("production", value: nil, help: "send to api.push.apple.com (the default)"),
        OptionSpec("sandbox", value: nil, help: "send to api.sandbox.push.apple.com (development builds)"),
        OptionSpec("host", value: "HOST", help: "send to another host (a mock, a proxy)"),
        OptionSpec("port", value: "N", help: "TCP port (default 443; APNs also listens on 2197)"),
        OptionSpec("ca-file", value: "FILE", help: "trust these CA certificates (PEM) instead of the system's"),
    ]

    /// Sets the credentials, host, port and CA file of `configuration` from `args`.
    static func apply(_ args: ParsedArguments, to configuration: inout ClientConfiguration) throws(UsageError) {
        try readCredentials(args, into: &configuration)
        try readDestination(args, into: &configuration)
    }

    private static func readCredentials(_ args: ParsedArguments, into configuration: inout ClientConfiguration) throws(UsageError) {
        if let cert = args.value("cert") ?? args.value("p12") {
            if args.value("key") != nil { throw UsageError("--key (token auth) and --cert/--p12 (certificate auth) exclude each other") }
            let certificate: ClientCertificate
            if args.value("p12") != nil {
                if args.value("cert") != nil { throw UsageError("--cert and --p12 exclude each other") }
                certificate = .pkcs12(bytes: try readSecretFile(cert, what: ".p12 file", limit: 1 << 20),
                                      password: SecretBytes(copying: args.value("password") ?? ""))
            } else {
                certificate = .pem(certificateFile: cert, keyFile: args.value("cert-key") ?? cert)
            }
            do throws(TransportError) {
                try certificate.validate()
            } catch {
                throw UsageError(error.description)
            }
            configuration.clientCertificate = certificate
            return
        }
        if args.value("password") != nil { throw UsageError("--password goes with --p12") }
        let path = try args.required("key")
        configuration.tokenKey = try readSecretFile(path, what: "key file", limit: 64 * 1024)
        configuration.keyID = try args.required("key-id")
        configuration.teamID = try args.required("team-id")
        do throws(SigningKey.LoadError) {
            _ = try SigningKey(pem: configuration.tokenKey!)
        } catch {
            throw UsageError("key file \(path): \(error.description)")
        }
    }

    private static func readDestination(_ args: ParsedArguments, into configuration: inout ClientConfiguration) throws(UsageError) {
        let environments = ["sandbox", "production"].filter { args.has($0) }
        if environments.count > 1 { throw UsageError("--sandbox and --production exclude each other") }
        if let host = args.value("host") {
            if !environments.isEmpty { throw UsageError("--host and --\(environments[0]) exclude each other") }
            guard !host.isEmpty, !host.utf8.contains(where: { $0 <= 0x20 || $0 >= 0x7F }) else {
                throw UsageError("--host needs a host name or address, got '\(host)'")
            }
            configuration.host = host
        } else {
            configuration.host = args.has("sandbox") ? "api.sandbox.push.apple.com" : "api.push.apple.com"
        }
        configuration.port = try args.integer("port", default: PushOption.port.defaultInt, in: PushOption.port.intRange)
        if let ca = args.value("ca-file") {
            guard access(ca, R_OK) == 0 else { throw UsageError("cannot read --ca-file \(ca): \(String(cString: strerror(errno)))") }
            configuration.caFile = ca
        }
    }

    /// Reads a key or a .p12 into memory that is cleared when freed.
    private static func readSecretFile(_ path: String, what: String, limit: Int) throws(UsageError) -> SecretBytes {
        do throws(FileBytes.ReadError) {
            return try FileBytes.readSecret(path: path, limit: limit)
        } catch {
            throw UsageError("cannot read \(what) \(path): \(error.description)")
        }
    }
}
