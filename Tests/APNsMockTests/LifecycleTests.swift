#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import PushCore
@testable import APNsMock

extension MockTests {
    /// Starting and stopping: what tests of "server killed mid-run, then restarted" rely on.
    @Suite(.timeLimit(.minutes(5))) struct LifecycleTests {
        let pki = TestPKI.shared
        var path: String { "/3/device/\(TestPKI.token)" }

        /// A connected TCP socket to 127.0.0.1:`port`.
        func connect(_ port: Int) throws -> Int32 {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var sin = sockaddr_in()
            sin.sin_family = sa_family_t(AF_INET)
            sin.sin_port = in_port_t(UInt16(port).bigEndian)
            sin.sin_addr.s_addr = inet_addr("127.0.0.1")
            let rc = withUnsafePointer(to: &sin) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            try #require(rc == 0)
            return fd
        }

        @Test("stop() drops every connection at once, and a new server can take the port right away")
        func stopAndRestart() throws {
            let server = try pki.startServer()
            // A client that connected and went quiet: only stop() can end its connection.
            let idle = try connect(server.port)
            defer { close(idle) }
            #expect(eventually { server.stats().openConnections == 1 })
            let port = server.port
            server.stop()
            // The socket sees its end at once (EOF or reset), not after a timeout.
            var tv = timeval(tv_sec: 2, tv_usec: 0)
            setsockopt(idle, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
            var byte: UInt8 = 0
            let n = recv(idle, &byte, 1, 0)
            #expect(n == 0 || (n < 0 && errno == ECONNRESET), "recv returned \(n), errno \(errno)")
            #expect(server.stats().openConnections == 0)

            let again = try pki.startServer { $0.port = port }
            defer { again.stop() }
            #expect(again.port == port)
            let r = Tool.nghttp(port: port, path: path, headers: try pki.validHeaders(), payloadFile: pki.payloadFile)
            #expect(r.status == 200, "\(r.output)")
        }

        @Test("A stopped server can be started again, keeping its counters, record and faults")
        func restartSameServer() throws {
            let server = try pki.startServer()
            var faults = MockFaults()
            faults.status503EveryNth = 2
            server.setFaults(faults)
            let headers = try pki.validHeaders()
            #expect(Tool.nghttp(port: server.port, path: path, headers: headers, payloadFile: pki.payloadFile).status == 200)
            server.stop()
            #expect(Tool.nghttp(port: server.port, path: path, headers: headers, payloadFile: pki.payloadFile).status == nil)
            try server.start()
            defer { server.stop() }
            // The faults stay; their counters start again with the new run.
            #expect(Tool.nghttp(port: server.port, path: path, headers: headers, payloadFile: pki.payloadFile).status == 200)
            #expect(Tool.nghttp(port: server.port, path: path, headers: headers, payloadFile: pki.payloadFile).status == 503)
            #expect(server.record().map(\.status) == [200, 200, 503])
            #expect(server.stats().requests == 3)
            server.stop() // a second stop does nothing
        }

        @Test("A certificate file that does not exist fails start() with its name")
        func badCertificate() throws {
            var config = try pki.mockConfiguration()
            config.certificateChainFile = "/nonexistent/server.pem"
            let server = MockServer(configuration: config)
            do {
                try server.start()
                Issue.record("start() succeeded")
            } catch {
                #expect(error.description.contains("/nonexistent/server.pem"))
            }
        }
    }
}
