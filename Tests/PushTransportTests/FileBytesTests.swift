import Foundation
import Testing
import PushCore
import PushCrypto
@testable import PushTransport

/// Reading keys and other small files (PushTransport: PushCore does no I/O).
@Suite("FileBytes", .timeLimit(.minutes(5)))
struct FileBytesTests {
    let support = ClientTestSupport()

    @Test("A key loads from a .p8 file, and a missing file is a LoadError naming the path")
    func signingKeyFromFile() throws {
        let path = support.pki + "/AuthKey_TESTKEY001.p8"
        _ = try SigningKey(path: path)
        let missing = path + ".missing"
        do {
            _ = try SigningKey(path: missing)
            Issue.record("missing file accepted")
        } catch {
            #expect(error.description.contains(missing))
        }
    }

    @Test("Files are read whole up to the limit and refused beyond it, as arrays and as secrets")
    func limits() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("swiftpush-filebytes-\(UUID().uuidString)")
        let content = (0..<40_000).map { UInt8(truncatingIfNeeded: $0) }
        try Data(content).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        #expect(try FileBytes.read(path: url.path, limit: 40_000) == content)
        #expect(try FileBytes.readSecret(path: url.path, limit: 40_000).arrayCopy == content)
        #expect(throws: FileBytes.ReadError.self) { try FileBytes.read(path: url.path, limit: 39_999) }
        #expect(throws: FileBytes.ReadError.self) { try FileBytes.readSecret(path: url.path, limit: 100) }
        #expect(throws: FileBytes.ReadError.self) { try FileBytes.read(path: url.path + ".none", limit: 10) }
    }
}
