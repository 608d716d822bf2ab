import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Files of a test's own: a fresh directory, bytes in and out with plain open/read/write.
/// Foundation's `String(contentsOfFile:)` is not used to read them: under LeakSanitizer
/// (`make test-asan`) it leaked a 4096-byte buffer per call.
public enum TestFiles {
    /// A new empty directory under $TMPDIR (or /tmp) whose name starts with `label`.
    public static func temporaryDirectory(_ label: String) -> String {
        let base = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array("\(base)/swiftpush-\(label)-\(getpid())-XXXXXX".utf8CString)
        return template.withUnsafeMutableBufferPointer { buffer in
            guard let made = mkdtemp(buffer.baseAddress!) else {
                preconditionFailure("mkdtemp \(base): \(String(cString: strerror(errno)))")
            }
            return String(cString: made)
        }
    }

    /// Removes `path` and everything under it, if it exists.
    public static func remove(_ path: String) {
        try? FileManager.default.removeItem(atPath: path)
    }

    /// This process's executable (/proc/self/exe), e.g. to run the test binary again in a
    /// process of its own; nil when it cannot be read.
    public static func executablePath() -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard n > 0 else { return nil }
        return String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The bytes of the file at `path`; nil when it cannot be opened.
    public static func read(_ path: String) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            bytes += chunk[0..<n]
        }
        return bytes
    }

    /// The file at `path` as text (UTF-8, invalid bytes replaced); nil when it cannot be opened.
    public static func readText(_ path: String) -> String? {
        read(path).map { String(decoding: $0, as: UTF8.self) }
    }

    /// Writes `bytes` to `path` (created or truncated); whether all of them were written.
    @discardableResult
    public static func write(_ bytes: [UInt8], to path: String) -> Bool {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return false }
            offset += n
        }
        return true
    }
}
