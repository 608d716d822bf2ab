import PushCore
import PushCrypto
import PushTransport

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
        /// Hold token connections to their initial limit of one stream from the first byte, as
        /// APNs does: a client that opens a second stream before it has seen (acknowledged) the
        /// server's SETTINGS gets GOAWAY(REFUSED_STREAM) (apns.md: nghttp2's default assumption
        /// of 100 streams is too high). When false, such streams are only reset with
        /// RST_STREAM(REFUSED_STREAM) until the SETTINGS are acknowledged (RFC 9113's
        /// leniency): for clients such as h2load that send before reading.
        public var strictInitialStreamLimit = true
        /// Accept any device token of hex digits in even number, whatever its length (the mock's
        /// behaviour before it checked lengths), for tests that send short made-up tokens. Off:
        /// a token outside `RequestValidation.deviceTokenBytes` (16...200 bytes) gets 400
        /// BadDeviceToken, as APNs answers a malformed token (docs/mock.md, "Device tokens").
        public var lenientDeviceTokens = false
        /// A CA file: when set, clients must present a certificate it issued (certificate
        /// authentication), and their topics come from it (subject UID and Apple's topics
        /// extension). With `tokenKeys` as well, a certificate is optional: connections
        /// without one use token authentication.
        public var clientCAFile: String?
        /// Device tokens (hex, as in the path) answered with 410 Unregistered, mapped to the
        /// timestamp (ms since the epoch) sent with it.
        public var unregisteredDeviceTokens: [String: Int64] = [:]
        /// The server's clock: it judges token ages and token updates, the faults' "until" times
        /// (`MockFaults.refuseConnectionsUntil`, `expireTokensUntil`) and delayed answers; the mock
        /// reads no other (tests substitute a `ManualClock`). Request times are read once per
        /// input read (`MockClock`).
        public var clock: any PushClock = SystemClock.shared
        /// A connection may change its provider token at most once per this many seconds;
        /// a faster change gets 429 TooManyProviderTokenUpdates (apns.md: refresh no more
        /// often than every 20 minutes).
        public var minTokenUpdateIntervalSeconds: Int64 = 20 * 60
        /// Topics (bundle ids) token-authenticated requests may push to; empty allows any.
        /// Others get 400 TopicDisallowed. The push type's suffix (`.voip`, ...) is removed
        /// before the comparison. Certificate connections take their topics from the
        /// certificate instead.
        public var allowedTopics: Set<String> = []
        /// Device token → the topic (bundle id) it was registered for. A request for a listed
        /// token with another topic gets 400 DeviceTokenNotForTopic; unlisted tokens may be
        /// sent to any topic.
        public var deviceTokenTopics: [String: String] = [:]
        /// Faults to inject from the start (change them later with `MockServer.setFaults`).
        public var faults = MockFaults()
        /// APNs's development environment: responses carry `apns-unique-id` (a random
        /// lowercase UUID), as api.sandbox.push.apple.com's do.
        public var developmentMode = false
        /// Keep a record of every processed request (`MockServer.record()`). On by default for
        /// tests; benchmarks may turn it off, though recording costs one append per request.
        public var recordRequests = true
        /// At most this many records are kept; later requests are only counted
        /// (`MockStats.recordsDropped`), so a long run cannot exhaust memory.
        public var recordLimit = 10_000_000
        /// When set, a control interface (plain HTTP/1.1, see `MockControl`) listens on
        /// 127.0.0.1 at this port (0: any free one; read it back from `MockServer.controlPort`).
        public var controlPort: Int?
        /// When set, the channel management API (apns.md, "Broadcast push and channels": Apple
        /// serves it on hosts of its own, ports 2195/2196) listens on `host` at this port (0:
        /// any free one; read it back from `MockServer.channelManagementPort`), with the same
        /// TLS and authentication as the main port.
        public var channelManagementPort: Int?
        /// The broadcast channels, shared by the management API and `/4/broadcasts` (and
        /// readable by tests): the per-app limit and apps without broadcast push are set here.
        public var channels = ChannelRegistry()

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
