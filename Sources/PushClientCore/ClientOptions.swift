#if canImport(Glibc)
import Glibc
#endif
import COpenSSL
import CSwiftPushABI
import PushClientMachine
import PushCore
import PushCrypto
import PushTransport

// Setting options on a `ClientConfiguration`: the checks push_config_set_int and
// push_config_set_string make (the C ABI only reads the caller's memory and reports), the
// clamps PushClient and PushClientGroup apply, and the ranges the CLI checks its flags against,
// all from `PushOption`, which is generated from Tables/options.tsv.

/// Which setter takes an option.
public enum PushOptionKind: Sendable {
    /// push_config_set_int.
    case int
    /// push_config_set_string.
    case string
}

extension PushOption {
    /// Largest token key accepted (file or PEM text); Apple's .p8 files are about 250 bytes.
    public static let maxKeyBytes = 64 * 1024
    /// Largest .p12 file read.
    static let maxP12Bytes = 1 << 20

    /// The longest string value accepted (a longer length is refused before a byte is read):
    /// the key PEM up to `maxKeyBytes`, every other value a path's length (PATH_MAX).
    public var maxValueBytes: Int { self == .tokenKeyPEM ? Self.maxKeyBytes : Int(PATH_MAX) }

    /// The error for a string value longer than `maxValueBytes`.
    public var valueTooLong: ClientError {
        self == .tokenKeyPEM
            ? ClientError(.key, "key is longer than \(Self.maxKeyBytes) bytes: not an Apple .p8 key (those are about 250)")
            : ClientError(.badOption, "value is longer than \(PATH_MAX) bytes")
    }

    /// The range as `Int`s, for callers that count in `Int` (the CLI's flags). Only for int options.
    public var intRange: ClosedRange<Int> {
        let r = range!
        return Int(r.lowerBound)...Int(r.upperBound)
    }

    /// `value` moved into the option's range: what a client does with a configuration that was
    /// not built through `set` (Swift callers may assign the properties directly).
    public func clamped(_ value: Int) -> Int { min(max(value, intRange.lowerBound), intRange.upperBound) }

    /// The default of an int option that has one, as the property's type.
    public var defaultInt: Int { Int(defaultValue!) }
}

extension ClientConfiguration {
    /// Sets an int option, checking it against its range (push_config_set_int).
    /// Throws `.badOption` for a string option or a value out of range.
    public mutating func set(_ option: PushOption, int value: Int64) throws(ClientError) {
        guard option.kind == .int, let range = option.range else {
            throw ClientError(.badOption, "option \(option.rawValue) is not an integer option")
        }
        if option == .environment {
            switch value {
            case Int64(PUSH_ENV_PRODUCTION.rawValue): endpoint.host = PUSH_HOST_PRODUCTION
            case Int64(PUSH_ENV_SANDBOX.rawValue): endpoint.host = PUSH_HOST_SANDBOX
            default: throw ClientError(.badOption, "environment must be PUSH_ENV_PRODUCTION or PUSH_ENV_SANDBOX, got \(value)")
            }
            return
        }
        guard range.contains(value), let field = option.field else {
            throw ClientError(.badOption, "\(option.label) must be in \(range.lowerBound)...\(range.upperBound), got \(value)")
        }
        self[keyPath: field] = Int(value)
    }

    /// Sets a string option from the caller's bytes (push_config_set_string), which must be no
    /// longer than `option.maxValueBytes`. Key files are read and checked at once (so an
    /// unreadable or invalid key is reported where it was given); a .p12 is read at once and
    /// opened with its password when the client opens (`resolvingCredentials`), so the password
    /// and the file may be set in either order. Passwords and keys go straight into
    /// `SecretBytes`, never through a `String`.
    public mutating func set(_ option: PushOption, string bytes: UnsafeRawBufferPointer) throws(ClientError) {
        guard option.kind == .string else { throw ClientError(.badOption, "option \(option.rawValue) is not a string option") }
        guard bytes.count <= option.maxValueBytes else { throw option.valueTooLong }
        if option == .tokenKeyPEM {
            try setTokenKey(SecretBytes(copying: bytes), origin: "key")
            return
        }
        // Every other value is text that must be UTF-8 without NULs, so that it means what it says.
        guard !bytes.contains(0) else { throw ClientError(.badOption, "value contains a NUL byte") }
        if option == .p12Password || option == .proxyCredentials {
            let secret = SecretBytes(copying: bytes)
            guard secret.isValidUTF8 else { throw ClientError(.badOption, "value is not valid UTF-8") }
            if option == .p12Password {
                credentials.p12Password = secret
            } else {
                guard bytes.contains(UInt8(ascii: ":")) else { throw ClientError(.badOption, "proxy credentials must be user:password") }
                endpoint.proxyCredentials = secret
            }
            return
        }
        guard let text = String(validating: bytes, as: UTF8.self) else { throw ClientError(.badOption, "value is not valid UTF-8") }
        try setText(option, text, bytes)
    }

    /// The string options whose value is plain text (not a secret).
    private mutating func setText(_ option: PushOption, _ text: String, _ bytes: UnsafeRawBufferPointer) throws(ClientError) {
        switch option {
        case .host:
            guard !bytes.isEmpty, !bytes.contains(where: { $0 <= 0x20 || $0 >= 0x7F }) else {
                throw ClientError(.badOption, "host must be a non-empty name or address without spaces")
            }
            endpoint.host = text
        case .caFile:
            guard !bytes.isEmpty else { throw ClientError(.badOption, "CA file path is empty") }
            guard access(text, R_OK) == 0 else {
                throw ClientError(.badOption, "cannot read CA file \(text): \(String(cString: strerror(errno)))")
            }
            endpoint.caFile = text
        case .tokenKeyFile:
            let pem = try Self.readSecret(text, limit: PushOption.maxKeyBytes, naming: "key file \(text)")
            try setTokenKey(pem, origin: "key file \(text)")
        case .keyID, .teamID:
            guard !bytes.isEmpty else { throw ClientError(.badOption, "\(option.label) is empty") }
            // They go into the JWT's JSON as they are (ProviderToken checks the same at open).
            guard bytes.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != 0x22 && $0 != 0x5C }) else {
                throw ClientError(.badOption, "\(option.label) must be printable ASCII without spaces, quotes or backslashes (Apple's are 10 characters)")
            }
            if option == .keyID { credentials.keyID = text } else { credentials.teamID = text }
        case .defaultTopic:
            guard bytes.count <= NotificationRules.maxTopicBytes, bytes.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
                throw ClientError(.badOption, "default topic must be printable ASCII without spaces, at most \(NotificationRules.maxTopicBytes) bytes")
            }
            defaultTopic = Array(bytes)
        case .proxy:
            guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
                  (1...65535).contains(port), colon > text.startIndex else {
                throw ClientError(.badOption, "proxy must be host:port, got \"\(text)\"")
            }
            var host = String(text[..<colon])
            if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
            endpoint.proxy = (host, port)
        case .certFile, .certKeyFile:
            guard access(text, R_OK) == 0 else {
                throw ClientError(.key, "cannot read \(text): \(String(cString: strerror(errno)))")
            }
            if option == .certFile { credentials.certificateFile = text } else { credentials.certificateKeyFile = text }
        case .p12File:
            let bytes = try Self.readSecret(text, limit: PushOption.maxP12Bytes, naming: text)
            // Not opened yet (the password may come later), but a file that is no PKCS#12 at
            // all is reported where it was given.
            do throws(TransportError) {
                PKCS12_free(try ClientCertificate.decodePKCS12(bytes))
            } catch {
                throw ClientError(.key, "\(text): \(error.description)")
            }
            credentials.p12File = (text, bytes)
        default:
            throw ClientError(.badOption, "option \(option.rawValue) is not a string option")
        }
    }

    /// Reads a key file into cleared memory; `.key` naming the file when it cannot be read.
    private static func readSecret(_ path: String, limit: Int, naming what: String) throws(ClientError) -> SecretBytes {
        do throws(FileBytes.ReadError) {
            return try FileBytes.readSecret(path: path, limit: limit)
        } catch {
            throw ClientError(.key, "cannot read \(what): \(error.description)")
        }
    }

    /// Checks the key and keeps its PEM text in `SecretBytes` (cleared when the configuration is
    /// freed or the key replaced); error messages never quote the key.
    private mutating func setTokenKey(_ pem: SecretBytes, origin: String) throws(ClientError) {
        do throws(SigningKey.LoadError) {
            _ = try SigningKey(pem: pem) // checked now so that a bad key is reported where it was given
        } catch {
            throw ClientError(.key, "\(origin): \(error.description)")
        }
        credentials.tokenKey = pem
    }

    /// The configuration with `clientCertificate` made from the certificate options
    /// (`certificateFile` and `certificateKeyFile`, or `p12File` opened with `p12Password`),
    /// checked, and those options cleared. Called when a client opens: only then are all the
    /// options known, so their order never matters. A certificate file wins over a .p12.
    public func resolvingCredentials() throws(ClientError) -> ClientConfiguration {
        var c = self
        c.credentials.certificateFile = nil
        c.credentials.certificateKeyFile = nil
        c.credentials.p12File = nil
        c.credentials.p12Password = nil
        let certificate: ClientCertificate
        let origin: String
        if let cert = credentials.certificateFile {
            certificate = .pem(certificateFile: cert, keyFile: credentials.certificateKeyFile ?? cert)
            origin = ""
        } else if credentials.certificateKeyFile != nil && credentials.clientCertificate == nil && credentials.p12File == nil {
            throw ClientError(.key, "PUSH_OPT_CERT_KEY_FILE is set without PUSH_OPT_CERT_FILE")
        } else if let p12 = credentials.p12File {
            certificate = .pkcs12(bytes: p12.bytes, password: credentials.p12Password ?? SecretBytes(copying: [UInt8]()))
            origin = "\(p12.path): "
        } else {
            return c
        }
        do throws(TransportError) {
            try certificate.validate()
        } catch {
            throw ClientError(.key, origin + error.description)
        }
        c.credentials.clientCertificate = certificate
        return c
    }
}
