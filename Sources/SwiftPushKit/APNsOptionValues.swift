import CSwiftPushABI
import PushCore
import PushClientCore

/// Option values as a host read them — the CLI's flags, an app in the worker's configuration
/// file — by option (`Tables/options.tsv`, whose flag and app key columns say how each host
/// spells them), before they are a configuration. `APNsConfiguration(options:naming:)` is the
/// one place that makes credentials and an endpoint of them.
package struct APNsOptionValues: Sendable {
    /// The string options' values.
    package var text: [PushOption: String] = [:]
    /// The int options' values (`.environment`: `PUSH_ENV_PRODUCTION` or `PUSH_ENV_SANDBOX`).
    package var numbers: [PushOption: Int] = [:]

    /// No values: every option at its default.
    package init() {}
}

extension APNsConfiguration {
    /// The configuration that `options` say: the credentials they name (a token key, a PEM
    /// certificate or a .p12, never two kinds), Apple's environment or another host, the port,
    /// CA file, proxy and default topic, and the pool, timing and recovery values. Every value
    /// is checked at once by the C ABI's setters (a key file is read and its key checked, a CA
    /// file must be readable...), so a host reports its mistakes before it opens a client; the
    /// messages name each value as the host spells it (`name`: "--key", "key_file"). Throws
    /// `.badOption` or `.key`.
    package init(options v: APNsOptionValues, naming name: (PushOption) -> String) throws(PushError) {
        // Which values go together first (no file is read for a combination that cannot be).
        let environment = try Self.environment(v, name)
        let credentials = try Self.credentials(v, name)
        // Then each value, checked as push_config_set_* checks it (the scratch configuration is dropped).
        var scratch = ClientConfiguration()
        for (option, text) in v.text.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            do throws(PushError) {
                try scratch.setOption(option, text: text)
            } catch {
                throw PushError(error.code, "\(name(option)): \(error.message)")
            }
        }
        for (option, value) in v.numbers.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            guard let range = option.range, range.contains(Int64(value)) else {
                let r = option.intRange
                throw PushError(.badOption, "\(name(option)) must be in \(r.lowerBound)...\(r.upperBound), got \(value)")
            }
        }
        self.init(environment: environment, credentials: credentials, defaultTopic: v.text[.defaultTopic])
        caFile = v.text[.caFile]
        if v.text[.proxy] != nil, let (host, port) = scratch.endpoint.proxy {
            proxy = APNsProxy(host: host, port: port, credentials: v.text[.proxyCredentials])
        } else if v.text[.proxyCredentials] != nil {
            throw PushError(.badOption, "\(name(.proxyCredentials)) goes with \(name(.proxy))")
        }
        for (option, value) in v.numbers where option != .port && option != .environment {
            let set = setGroupOption(option, value)
            assert(set, "every int option but port and environment has a field in pool, timing or recovery")
        }
    }

    /// Apple's environment (production unless `.environment` says sandbox) or another host;
    /// the port on either.
    private static func environment(_ v: APNsOptionValues, _ name: (PushOption) -> String) throws(PushError) -> APNsEnvironment {
        let port = v.numbers[.port]
        if let host = v.text[.host] {
            if v.numbers[.environment] != nil {
                throw PushError(.badOption, "\(name(.host)) and \(name(.environment)) exclude each other")
            }
            return .custom(host: host, port: port ?? PushOption.port.defaultInt)
        }
        let apple: APNsEnvironment = v.numbers[.environment] == Int(PUSH_ENV_SANDBOX.rawValue) ? .sandbox : .production
        return port.map { .custom(host: apple.host, port: $0) } ?? apple
    }

    /// One kind of credentials, whole.
    private static func credentials(_ v: APNsOptionValues, _ name: (PushOption) -> String) throws(PushError) -> APNsCredentials {
        let t = v.text
        let token = t[.tokenKeyFile] != nil || t[.tokenKeyPEM] != nil
        if token && (t[.certFile] != nil || t[.p12File] != nil) {
            throw PushError(.badOption, "\(name(.tokenKeyFile)) (token auth) and \(name(.certFile))/\(name(.p12File)) (certificate auth) exclude each other")
        }
        if t[.tokenKeyFile] != nil && t[.tokenKeyPEM] != nil {
            throw PushError(.badOption, "\(name(.tokenKeyFile)) and \(name(.tokenKeyPEM)) exclude each other")
        }
        if let file = t[.certFile] {
            if t[.p12File] != nil { throw PushError(.badOption, "\(name(.certFile)) and \(name(.p12File)) exclude each other") }
            if t[.p12Password] != nil { throw PushError(.badOption, "\(name(.p12Password)) goes with \(name(.p12File))") }
            return .certificate(file: file, keyFile: t[.certKeyFile])
        }
        if t[.certKeyFile] != nil { throw PushError(.badOption, "\(name(.certKeyFile)) goes with \(name(.certFile))") }
        if let file = t[.p12File] { return .p12(file: file, password: t[.p12Password] ?? "") }
        if t[.p12Password] != nil { throw PushError(.badOption, "\(name(.p12Password)) goes with \(name(.p12File))") }
        guard token else {
            throw PushError(.badOption, "missing \(name(.tokenKeyFile)) (token auth) or \(name(.certFile))/\(name(.p12File)) (certificate auth)")
        }
        guard let keyID = t[.keyID] else { throw PushError(.badOption, "missing \(name(.keyID))") }
        guard let teamID = t[.teamID] else { throw PushError(.badOption, "missing \(name(.teamID))") }
        if let file = t[.tokenKeyFile] { return .tokenKey(file: file, keyID: keyID, teamID: teamID) }
        return .tokenKey(pem: Array(t[.tokenKeyPEM]!.utf8), keyID: keyID, teamID: teamID)
    }
}
