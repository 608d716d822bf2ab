#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import PushCore
import PushClientCore
import PushTransport

/// The options that say how to reach APNs and who we are: credentials (token key or client
/// certificate) and destination (environment or host, port, CA file). Shared by `send` and
/// `channels` (`@OptionGroup`), so both take the same flags and check them the same way.
struct ConnectionOptions: ParsableArguments {
    @OptionGroup var token: TokenKeyOptions
    @Option(help: ArgumentHelp("certificate auth: PEM certificate (and its key, unless --cert-key)", valueName: "FILE"))
    var cert: String?
    @Option(help: ArgumentHelp("certificate auth: the PEM private key of --cert", valueName: "FILE"))
    var certKey: String?
    @Option(help: ArgumentHelp("certificate auth: a .p12 file holding certificate and key", valueName: "FILE"))
    var p12: String?
    @Option(help: ArgumentHelp("password of the .p12 file", valueName: "PASSWORD"))
    var password: String?
    @Flag(help: "send to api.push.apple.com (the default)")
    var production = false
    @Flag(help: "send to api.sandbox.push.apple.com (development builds)")
    var sandbox = false
    @Option(help: ArgumentHelp("send to another host (a mock, a proxy)", valueName: "HOST"))
    var host: String?
    @Option(help: ArgumentHelp("TCP port (default 443; APNs also listens on 2197)", valueName: "N"))
    var port: Int?
    @Option(help: ArgumentHelp("trust these CA certificates (PEM) instead of the system's", valueName: "FILE"))
    var caFile: String?

    /// What can be checked without reading a file.
    func validate() throws(ValidationError) {
        if cert != nil || p12 != nil {
            if token.key != nil { throw ValidationError("--key (token auth) and --cert/--p12 (certificate auth) exclude each other") }
            if cert != nil && p12 != nil { throw ValidationError("--cert and --p12 exclude each other") }
        } else {
            if password != nil { throw ValidationError("--password goes with --p12") }
            _ = try token.required()
        }
        if sandbox && production { throw ValidationError("--sandbox and --production exclude each other") }
        if let host {
            if sandbox || production { throw ValidationError("--host and --\(sandbox ? "sandbox" : "production") exclude each other") }
            guard !host.isEmpty, !host.utf8.contains(where: { $0 <= 0x20 || $0 >= 0x7F }) else {
                throw ValidationError("--host needs a host name or address, got '\(host)'")
            }
        }
        try checkRange(port, "port", PushOption.port.intRange)
    }

    /// Sets the credentials, host, port and CA file of `configuration`, reading the key files.
    func apply(to configuration: inout ClientConfiguration) throws(ValidationError) {
        try readCredentials(into: &configuration)
        configuration.endpoint.host = host ?? (sandbox ? "api.sandbox.push.apple.com" : "api.push.apple.com")
        configuration.endpoint.port = port ?? PushOption.port.defaultInt
        if let caFile {
            guard access(caFile, R_OK) == 0 else { throw ValidationError("cannot read --ca-file \(caFile): \(String(cString: strerror(errno)))") }
            configuration.endpoint.caFile = caFile
        }
    }

    private func readCredentials(into configuration: inout ClientConfiguration) throws(ValidationError) {
        if let file = cert ?? p12 {
            let certificate: ClientCertificate
            if p12 != nil {
                certificate = .pkcs12(bytes: try readSecretFile(file, what: ".p12 file", limit: 1 << 20),
                                      password: SecretBytes(copying: password ?? ""))
            } else {
                certificate = .pem(certificateFile: file, keyFile: certKey ?? file)
            }
            do throws(TransportError) {
                try certificate.validate()
            } catch {
                throw ValidationError(error.description)
            }
            configuration.credentials.clientCertificate = certificate
            return
        }
        let (path, keyID, teamID) = try token.required() // validate() checked them
        configuration.credentials.tokenKey = try readSecretFile(path, what: "key file", limit: 64 * 1024)
        configuration.credentials.keyID = keyID
        configuration.credentials.teamID = teamID
        do throws(SigningKey.LoadError) {
            _ = try SigningKey(pem: configuration.credentials.tokenKey!)
        } catch {
            throw ValidationError("key file \(path): \(error.description)")
        }
    }

    /// Reads a key or a .p12 into memory that is cleared when freed.
    private func readSecretFile(_ path: String, what: String, limit: Int) throws(ValidationError) -> SecretBytes {
        do throws(FileBytes.ReadError) {
            return try FileBytes.readSecret(path: path, limit: limit)
        } catch {
            throw ValidationError("cannot read \(what) \(path): \(error.description)")
        }
    }
}
