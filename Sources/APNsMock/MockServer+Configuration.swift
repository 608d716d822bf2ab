import PushCore

extension MockServer {
    /// How a `MockServer` listens and what it demands of clients.
    public struct Configuration: Sendable {
        /// The server certificate chain (PEM).
        public var certificateChainFile: String
        /// The server's private key (PEM).
        public var privateKeyFile: String
        /// The address to listen on: an IPv4 or IPv6 literal (a mock belongs on loopback).
        public var host: String = "127.0.0.1"
        /// The TCP port; 0 picks a free one (read it back from `MockServer.port`).
        public var port: Int = 0
        /// Token keys the server accepts. Non-empty: token authentication is on, and every
        /// request needs `authorization: bearer <JWT>` signed by one of them.
        public var tokenKeys: [TokenKey] = []
        /// Tokens whose `iat` is older than this get 403 ExpiredProviderToken (apns.md: an hour).
        public var tokenMaxAgeSeconds: Int64 = 3600
        /// With token auth APNs allows one stream until a request succeeds, then raises the
        /// limit with a SETTINGS frame to this value (apns.md: observed 500, later 1000).
        /// Without token auth connections start at this value.
        public var maxConcurrentStreams: Int = 1000
        /// A CA file: when set, clients must present a certificate it issued (certificate
        /// authentication).
        public var clientCAFile: String?
        /// Device tokens (hex, as in the path) answered with 410 Unregistered, mapped to the
        /// timestamp (ms since the epoch) sent with it.
        public var unregisteredDeviceTokens: [String: Int64] = [:]
        /// The clock that judges token age (tests substitute a `ManualClock`).
        public var clock: any PushClock = SystemClock.shared

        /// A configuration presenting the given certificate chain and key; everything else
        /// at its default (loopback, ephemeral port, no token auth).
        public init(certificateChainFile: String, privateKeyFile: String) {
            self.certificateChainFile = certificateChainFile
            self.privateKeyFile = privateKeyFile
        }
    }

    /// A token-signing key the server trusts: key id, team id and the public key.
    public struct TokenKey: Sendable {
        /// The key id (`kid` in the JWT header; Apple's are 10 characters).
        public var keyID: String
        /// The team that owns the key (`iss` in the claims).
        public var teamID: String
        /// The public key as PEM (SubjectPublicKeyInfo).
        public var publicKeyPEM: [UInt8]

        /// A key from its public PEM.
        public init(keyID: String, teamID: String, publicKeyPEM: [UInt8]) {
            self.keyID = keyID
            self.teamID = teamID
            self.publicKeyPEM = publicKeyPEM
        }

        /// A key from a file holding either the `.p8` private key (its public half is used) or
        /// the public key PEM.
        public init(keyID: String, teamID: String, file: String) throws(StartError) {
            let bytes: [UInt8]
            do throws(FileBytes.ReadError) {
                bytes = try FileBytes.read(path: file, limit: 64 * 1024)
            } catch {
                throw StartError("cannot read key file \(file): \(error.description)")
            }
            if bytes.withUnsafeBytes({ Self.contains($0, "PRIVATE KEY") }) {
                do throws(SigningKey.LoadError) {
                    let key = try SigningKey(pem: bytes)
                    self.init(keyID: keyID, teamID: teamID, publicKeyPEM: key.publicKeyPEM())
                } catch {
                    throw StartError("key file \(file): \(error.description)")
                }
            } else {
                self.init(keyID: keyID, teamID: teamID, publicKeyPEM: bytes)
            }
        }

        private static func contains(_ haystack: UnsafeRawBufferPointer, _ needle: String) -> Bool {
            let n = Array(needle.utf8)
            guard haystack.count >= n.count else { return false }
            for i in 0...(haystack.count - n.count) where haystack[i] == n[0] {
                if haystack[i..<(i + n.count)].elementsEqual(n) { return true }
            }
            return false
        }
    }

    /// Why the server could not start (bad files, address in use, ...).
    public struct StartError: Error, CustomStringConvertible, Sendable {
        /// What went wrong, for people.
        public let description: String
        /// An error with the given message.
        public init(_ description: String) { self.description = description }
    }
}
