#if canImport(Glibc)
import Glibc
#endif
import COpenSSL
import PushCore
import PushCrypto

/// Reads small files whole (keys, certificates, payloads, corpora). File reading lives here, in
/// the I/O module: PushCore does no I/O.
public enum FileBytes {
    /// Why a file could not be read.
    public struct ReadError: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    /// Reads the file at `path`, refusing files larger than `limit` bytes.
    public static func read(path: String, limit: Int) throws(ReadError) -> [UInt8] {
        let secret = try readSecret(path: path, limit: limit)
        return secret.arrayCopy
    }

    /// Reads a small secret file (a private key) into `SecretBytes`: straight into one buffer of
    /// `limit` + 1 bytes, so no intermediate copy is left behind in freed memory.
    public static func readSecret(path: String, limit: Int) throws(ReadError) -> SecretBytes {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw ReadError(description: String(cString: strerror(errno))) }
        defer { close(fd) }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: limit + 1, alignment: 16)
        var used = 0
        while used <= limit {
            let n = Glibc.read(fd, buffer.baseAddress! + used, limit + 1 - used)
            if n < 0 {
                if errno == EINTR { continue }
                let e = errno
                OPENSSL_cleanse(buffer.baseAddress, used)
                buffer.deallocate()
                throw ReadError(description: String(cString: strerror(e)))
            }
            if n == 0 { break }
            used += n
        }
        let secret = SecretBytes(adopting: buffer, count: used)
        if used > limit { throw ReadError(description: "file is larger than \(limit) bytes") }
        return secret
    }
}

extension SigningKey {
    /// Loads a `.p8` key from a file (the PEM text is cleared once parsed).
    public convenience init(path: String) throws(LoadError) {
        let secret: SecretBytes
        do throws(FileBytes.ReadError) {
            secret = try FileBytes.readSecret(path: path, limit: 64 * 1024)
        } catch {
            throw LoadError(description: "cannot read key file \(path): \(error.description)")
        }
        try self.init(pem: secret)
    }
}
