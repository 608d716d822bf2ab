import Foundation
import PushCore
import PushCrypto
import SwiftPushRedis
import Testing

/// Connections to a real redis-server that listens on TLS only (`--port 0 --tls-port`) and knows
/// one ACL user (the default user is off): the right credentials work; each wrong one fails at
/// once, classified as permanent, with a message naming the cause and never the password, after
/// exactly one connection (the server's own count) — no retry storm, even through the router.
@Suite("Redis over TLS with an ACL user", .serialized, .timeLimit(.minutes(5)))
final class TLSAndAuthTests {
    static let user = "sender"
    static let password = "right-horse-battery"
    let server: RedisServerProcess
    let pki = RedisTestSupport.pki

    init() throws {
        server = try RedisServerProcess(tls: true, arguments: [
            "--user", "default", "off", "--user", Self.user, "on", ">" + Self.password, "~*", "&*", "+@all",
        ])
    }

    /// A configuration for the test server; `change` adjusts it.
    func configuration(host: String = "localhost", _ change: (inout RedisConfiguration) -> Void = { _ in }) -> RedisConfiguration {
        var c = RedisConfiguration(node: server.node(host: host))
        c.username = Self.user
        c.password = .value(SecretBytes(copying: Self.password))
        c.tls = RedisTLSConfiguration(caFile: pki + "/ca.pem")
        c.connectTimeoutMillis = 3000
        c.failoverTimeoutMillis = 3000
        change(&c)
        return c
    }

    /// Runs `attempt` through a router pipeline (which retries what can be retried), expecting
    /// it to fail with `kind` at once and after exactly one connection; returns the error.
    func expectPermanentFailure(_ config: RedisConfiguration, kind: RedisError.Kind) throws -> RedisError {
        let before = server.acceptedConnections
        var caught: RedisError?
        let ms = millisecondsTaken {
            do throws(RedisError) {
                _ = try RedisRouter(config).pipeline([RedisArguments(["SET", "k", "v"])], slot: 0)
            } catch {
                caught = error
            }
        }
        let error = try #require(caught)
        #expect(error.kind == kind, "\(error.description)")
        #expect(error.isPermanent && error.connectionLost)
        #expect(!error.description.contains(Self.password))
        #expect(ms < 2000, "failed after \(ms) ms: not at once")
        let after = server.acceptedConnections
        #expect(after - before == 1, "the server saw \(after - before) connection attempts")
        return error
    }

    @Test("The right user and password, over TLS verified against the test CA, by name and by address")
    func rightCredentials() throws {
        for host in ["localhost", "127.0.0.1"] {
            let c = try RedisConnector(configuration(host: host)).connect()
            #expect(try c.command("SET", "greeting", "hello") == .status("OK"))
            let replies = try c.pipeline([RedisArguments(["GET", "greeting"]), RedisArguments(["ACL", "WHOAMI"])])
            #expect(replies == [.string(Array("hello".utf8)), .string(Array(Self.user.utf8))])
            c.close()
        }
    }

    @Test("The password may come from a file (one trailing newline dropped) or an environment variable")
    func passwordSources() throws {
        let dir = RedisTestSupport.temporaryDirectory("password")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let file = dir + "/redis-password"
        try (Self.password + "\n").write(toFile: file, atomically: true, encoding: .utf8)
        let fromFile = try RedisConnector(configuration { $0.password = .file(file) }).connect()
        #expect(try fromFile.command("PING") == .status("PONG"))
        let variable = "SWIFTPUSH_TEST_REDIS_PASSWORD_\(getpid())"
        setenv(variable, Self.password, 1)
        defer { unsetenv(variable) }
        let fromEnvironment = try RedisConnector(configuration { $0.password = .environment(variable) }).connect()
        #expect(try fromEnvironment.command("PING") == .status("PONG"))
        #expect(throws: RedisError.self) { try RedisConnector(configuration { $0.password = .file(dir + "/missing") }) }
        #expect(throws: RedisError.self) { try RedisConnector(configuration { $0.password = .environment(variable + "_UNSET") }) }
    }

    @Test("A wrong password fails at once as an authentication error, after one connection, without the password in the message")
    func wrongPassword() throws {
        let e = try expectPermanentFailure(configuration { $0.password = .value(SecretBytes(copying: "wrong-horse")) }, kind: .authentication)
        #expect(e.description.contains("WRONGPASS") && e.description.contains(Self.user))
        #expect(!e.description.contains("wrong-horse"))
    }

    @Test("No credentials for a server that wants them fails at once, naming NOAUTH")
    func missingCredentials() throws {
        let e = try expectPermanentFailure(configuration { $0.username = nil; $0.password = .none }, kind: .authentication)
        #expect(e.description.contains("NOAUTH"))
    }

    @Test("A server certificate from a CA we do not trust fails at once as a certificate error")
    func unknownCA() throws {
        let e = try expectPermanentFailure(configuration { $0.tls?.caFile = pki + "/untrusted-ca.pem" }, kind: .certificate)
        #expect(e.description.contains("not trusted"))
    }

    @Test("A certificate that is not for the name asked for fails at once as a host-name error")
    func wrongHostName() throws {
        let e = try expectPermanentFailure(configuration { $0.tls?.serverName = "redis.example.com" }, kind: .hostName)
        #expect(e.description.contains("redis.example.com"))
    }

    @Test("Speaking in the clear to a TLS port fails at once as a TLS error that says so")
    func plainToTLS() throws {
        let e = try expectPermanentFailure(configuration { $0.tls = nil }, kind: .tls)
        #expect(e.description.contains("TLS"))
    }

    @Test("TLS to a plain port times out in the handshake within the connect timeout, retryable, with a hint")
    func tlsToPlain() throws {
        // A plain Redis reads the ClientHello as the start of an inline command and waits for the
        // rest: nothing tells this apart from a slow server but the time it takes.
        let plain = try RedisServerProcess(tls: false)
        var c = configuration()
        c.nodes = [plain.node()]
        c.username = nil
        c.password = .none
        c.connectTimeoutMillis = 500
        let before = MonotonicTime.nanos()
        #expect {
            _ = try RedisConnector(c).connect()
        } throws: { error in
            let e = error as! RedisError
            return e.kind == .connection && e.timedOut && !e.isPermanent && e.description.contains("non-TLS")
        }
        #expect(MonotonicTime.nanos() - before < 2_000_000_000)
    }

    @Test("A server that requires a client certificate accepts ours and refuses a session without one")
    func clientCertificate() throws {
        let strict = try RedisServerProcess(tls: true, arguments: ["--tls-auth-clients", "yes"])
        var c = configuration()
        c.nodes = [strict.node()]
        c.username = nil
        c.password = .none
        c.tls?.certFile = pki + "/client.pem"
        c.tls?.keyFile = pki + "/client.key"
        let ok = try RedisConnector(c).connect()
        #expect(try ok.command("PING") == .status("PONG"))
        c.tls?.certFile = nil
        c.tls?.keyFile = nil
        #expect {
            _ = try RedisConnector(c).connect()
        } throws: { error in
            let e = error as! RedisError
            return e.kind == .tls && e.isPermanent
        }
    }

    @Test("A lost connection is not permanent: the server going away is a connection error to retry")
    func lostConnection() throws {
        let c = try RedisConnector(configuration()).connect()
        #expect(try c.command("PING") == .status("PONG"))
        server.stop()
        #expect {
            _ = try c.command("PING")
        } throws: { error in
            let e = error as! RedisError
            return e.kind == .connection && e.connectionLost && !e.isPermanent
        }
        #expect(!c.isConnected)
    }
}
