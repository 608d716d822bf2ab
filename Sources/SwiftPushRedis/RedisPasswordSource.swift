#if canImport(Glibc)
import Glibc
#endif
import PushCore
import PushCrypto
import PushTransport

/// Where the Redis password comes from: nowhere, the configuration itself, a file or an
/// environment variable. It is read when a `RedisConnector` is made, into `SecretBytes`
/// (cleared when freed); printing a source shows where it comes from, never the password.
public enum RedisPasswordSource: Sendable, Equatable, CustomStringConvertible {
    /// No password: no AUTH is sent.
    case none
    /// The password itself (`"password"` in a file: prefer the other two, which keep it out of
    /// the configuration).
    case value(SecretBytes)
    /// A file holding the password (`"password_file"`); one trailing newline is not part of it.
    case file(String)
    /// An environment variable holding it (`"password_env"`).
    case environment(String)

    public static func == (a: RedisPasswordSource, b: RedisPasswordSource) -> Bool {
        switch (a, b) {
        case (.none, .none): return true
        case let (.value(x), .value(y)): return x.sameBytes(as: y)
        case let (.file(x), .file(y)): return x == y
        case let (.environment(x), .environment(y)): return x == y
        default: return false
        }
    }

    public var description: String {
        switch self {
        case .none: return "none"
        case .value(let s): return "value(\(s.count) bytes)"
        case .file(let path): return "file(\(path))"
        case .environment(let name): return "environment(\(name))"
        }
    }

    /// The largest password file read (a password, not a document).
    static let fileLimit = 4096

    /// The password, read now; nil for `.none`. Errors name the file or variable, never the
    /// contents.
    public func resolve() throws(RedisError) -> SecretBytes? {
        switch self {
        case .none:
            return nil
        case .value(let secret):
            return secret
        case .file(let path):
            let raw: SecretBytes
            do throws(FileBytes.ReadError) {
                raw = try FileBytes.readSecret(path: path, limit: Self.fileLimit)
            } catch {
                throw RedisError(.configuration, "cannot read the Redis password file \(path): \(error.description)")
            }
            let secret = raw.withUnsafeBytes { bytes in
                var n = bytes.count
                if n > 0 && bytes[n - 1] == 10 { n -= 1 }
                if n > 0 && bytes[n - 1] == 13 { n -= 1 }
                return SecretBytes(copying: UnsafeRawBufferPointer(rebasing: bytes[0..<n]))
            }
            if secret.count == 0 { throw RedisError(.configuration, "the Redis password file \(path) is empty") }
            return secret
        case .environment(let name):
            guard let value = getenv(name) else {
                throw RedisError(.configuration, "the environment variable \(name) (the Redis password) is not set")
            }
            let n = strlen(value)
            if n == 0 { throw RedisError(.configuration, "the environment variable \(name) (the Redis password) is empty") }
            return SecretBytes(copying: UnsafeRawBufferPointer(start: value, count: n))
        }
    }
}
