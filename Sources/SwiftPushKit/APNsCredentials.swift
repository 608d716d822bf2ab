import PushCore
import PushCrypto
import PushClientCore

/// How the client authenticates to APNs: a token key (`.p8`, with its key id and team id: one
/// JWT signed for all notifications, renewed before it expires) or a client certificate (PEM
/// files or a `.p12`). Keys and passwords are kept in memory that is cleared when freed, and
/// never appear in errors, logs or descriptions.
public struct APNsCredentials: Sendable, CustomStringConvertible {
    enum Kind: Sendable {
        case tokenKeyFile(path: String, keyID: String, teamID: String)
        case tokenKeyPEM(SecretBytes, keyID: String, teamID: String)
        case certificate(file: String, keyFile: String?)
        case p12(file: String, password: SecretBytes)
    }

    let kind: Kind

    /// A token key read from `file` (Apple's `AuthKey_<key id>.p8`: PKCS#8 PEM, P-256), with
    /// its 10-character key id and the team id. The file is read and checked when the client
    /// opens.
    public static func tokenKey(file: String, keyID: String, teamID: String) -> APNsCredentials {
        APNsCredentials(kind: .tokenKeyFile(path: file, keyID: keyID, teamID: teamID))
    }

    /// A token key given as the `.p8` file's contents (PEM text, at most 64 KiB; copied into
    /// memory that is cleared when freed), with its key id and team id.
    public static func tokenKey(pem: [UInt8], keyID: String, teamID: String) -> APNsCredentials {
        APNsCredentials(kind: .tokenKeyPEM(SecretBytes(copying: pem), keyID: keyID, teamID: teamID))
    }

    /// A client certificate chain in a PEM `file`, with its private key in `keyFile` (nil: the
    /// same file).
    public static func certificate(file: String, keyFile: String? = nil) -> APNsCredentials {
        APNsCredentials(kind: .certificate(file: file, keyFile: keyFile))
    }

    /// A client certificate and key in a PKCS#12 (`.p12`) `file`, opened with `password`
    /// ("" for none; copied into memory that is cleared when freed).
    public static func p12(file: String, password: String) -> APNsCredentials {
        APNsCredentials(kind: .p12(file: file, password: SecretBytes(copying: password)))
    }

    /// What kind of credentials, and where from: never a key or a password.
    public var description: String {
        switch kind {
        case .tokenKeyFile(let path, let keyID, let teamID): return "token key \(path) (key id \(keyID), team \(teamID))"
        case .tokenKeyPEM(_, let keyID, let teamID): return "token key (key id \(keyID), team \(teamID))"
        case .certificate(let file, _): return "certificate \(file)"
        case .p12(let file, _): return "certificate \(file)"
        }
    }

    /// Sets the credentials on `c` through the C ABI's setters (the same checks and messages).
    func apply(to c: inout ClientConfiguration) throws(PushError) {
        switch kind {
        case .tokenKeyFile(let path, let keyID, let teamID):
            try c.setOption(.tokenKeyFile, text: path)
            try c.setOption(.keyID, text: keyID)
            try c.setOption(.teamID, text: teamID)
        case .tokenKeyPEM(let pem, let keyID, let teamID):
            try pem.withUnsafeBytes { (bytes) throws(PushError) in try c.setOption(.tokenKeyPEM, bytes: bytes) }
            try c.setOption(.keyID, text: keyID)
            try c.setOption(.teamID, text: teamID)
        case .certificate(let file, let keyFile):
            try c.setOption(.certFile, text: file)
            if let keyFile { try c.setOption(.certKeyFile, text: keyFile) }
        case .p12(let file, let password):
            try c.setOption(.p12File, text: file)
            try password.withUnsafeBytes { (bytes) throws(PushError) in try c.setOption(.p12Password, bytes: bytes) }
        }
    }
}
