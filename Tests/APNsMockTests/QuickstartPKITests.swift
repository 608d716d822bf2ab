#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import PushCore
@testable import APNsMock

extension MockTests {
    /// `swiftpush mock --quickstart DIR`'s PKI: made with OpenSSL's library, judged here by the
    /// `openssl` command (an independent verifier) and by a real mock and nghttp.
    @Suite struct QuickstartPKITests {
        /// A directory that does not exist yet, two levels below a new temporary one, which
        /// `body`'s end removes.
        func inFreshDirectory(_ body: (String) throws -> Void) throws {
            let top = NSTemporaryDirectory() + "swiftpush-quickstart-\(getpid())-\(UUID().uuidString)"
            defer { try? FileManager.default.removeItem(atPath: top) }
            try body(top + "/a/b")
        }

        func bytes(_ path: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: path)) }

        func mode(_ path: String) -> mode_t {
            var st = stat()
            return stat(path, &st) == 0 ? st.st_mode & 0o777 : 0
        }

        @Test("A new directory gets a CA, a server certificate for localhost, 127.0.0.1 and ::1, and a P-256 .p8; keys private")
        func makesEverything() throws { try inFreshDirectory { dir in
            let pki = try QuickstartPKI.prepare(directory: dir)
            #expect(pki.madeCertificates && pki.madeTokenKey)
            #expect(pki.directory.hasPrefix("/") && pki.tokenKeyFile == pki.directory + "/AuthKey_TESTKEY001.p8")
            #expect(mode(pki.serverKeyFile) == 0o600 && mode(pki.tokenKeyFile) == 0o600 && mode(pki.caFile) == 0o644)
            for check in [["-verify_hostname", "localhost"], ["-verify_ip", "127.0.0.1"], ["-verify_ip", "::1"]] {
                let r = Tool.run("/usr/bin/openssl", ["verify", "-CAfile", pki.caFile, "-purpose", "sslserver"] + check + [pki.serverCertificateFile])
                #expect(r.status == 0 && r.output.contains(": OK"), "\(check): \(r.output)")
            }
            let other = Tool.run("/usr/bin/openssl", ["verify", "-CAfile", pki.caFile, "-verify_hostname", "example.com", pki.serverCertificateFile])
            #expect(other.status != 0, "the certificate must not be good for another name: \(other.output)")
            let key = Tool.run("/usr/bin/openssl", ["pkey", "-in", pki.tokenKeyFile, "-noout", "-text"])
            #expect(key.status == 0 && key.output.contains("NIST CURVE: P-256"), "\(key.output)")
            #expect(try String(decoding: bytes(pki.tokenKeyFile), as: UTF8.self).hasPrefix("-----BEGIN PRIVATE KEY-----"))
        } }

        @Test("A mock serving the quickstart files answers 200 to a request signed with the quickstart .p8")
        func servesWithIt() throws { try inFreshDirectory { dir in
            let pki = try QuickstartPKI.prepare(directory: dir)
            var config = MockServer.Configuration(certificateChainFile: pki.serverCertificateFile, privateKeyFile: pki.serverKeyFile)
            config.tokenKeys = [try MockServer.TokenKey(keyID: QuickstartPKI.keyID, teamID: QuickstartPKI.teamID, file: pki.tokenKeyFile)]
            let server = MockServer(configuration: config)
            try server.start()
            defer { server.stop() }
            let shared = TestPKI.shared
            let headers = ["apns-topic: \(QuickstartPKI.topic)", "apns-push-type: alert",
                           "authorization: " + (try shared.authorization(keyFile: pki.tokenKeyFile))]
            let r = Tool.nghttp(port: server.port, path: "/3/device/\(TestPKI.token)", headers: headers, payloadFile: shared.payloadFile)
            #expect(r.status == 200, "\(r.output)")
        } }

        @Test("A second prepare keeps every file; without the server key the certificates are remade, the .p8 kept")
        func keepsWhatIsThere() throws { try inFreshDirectory { dir in
            let first = try QuickstartPKI.prepare(directory: dir)
            let files = [first.caFile, first.serverCertificateFile, first.serverKeyFile, first.tokenKeyFile]
            let before = try files.map(bytes)
            let second = try QuickstartPKI.prepare(directory: first.directory)
            #expect(!second.madeCertificates && !second.madeTokenKey)
            #expect(try files.map(bytes) == before)

            unlink(first.serverKeyFile)
            let third = try QuickstartPKI.prepare(directory: first.directory)
            #expect(third.madeCertificates && !third.madeTokenKey)
            let after = try files.map(bytes)
            #expect(after[0] != before[0] && after[1] != before[1] && after[3] == before[3])
            let r = Tool.run("/usr/bin/openssl", ["verify", "-CAfile", third.caFile, third.serverCertificateFile])
            #expect(r.status == 0, "the remade certificate is the remade CA's: \(r.output)")
        } }

        @Test("A directory that cannot be made is an error naming it")
        func unusableDirectory() throws {
            let file = NSTemporaryDirectory() + "swiftpush-quickstart-file-\(getpid())"
            #expect(FileManager.default.createFile(atPath: file, contents: Data()))
            defer { unlink(file) }
            #expect(throws: QuickstartPKI.Failure.self) { try QuickstartPKI.prepare(directory: file + "/sub") }
            do { _ = try QuickstartPKI.prepare(directory: file + "/sub") } catch { #expect(error.description.contains(file)) }
        }
    }
}
