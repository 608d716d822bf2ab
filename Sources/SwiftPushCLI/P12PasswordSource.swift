#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import PushCore
import PushTransport

/// Where the .p12 password comes from when not `--password` (which `ps` shows to every user of
/// the machine): a file, an environment variable or a prompt on the terminal, as the Redis
/// password comes from a file or a variable (`RedisOptions`). Part of `ConnectionOptions`.
struct P12PasswordSource: ParsableArguments {
    @Option(help: ArgumentHelp("file holding the .p12 password (a trailing newline is not part of it)", valueName: "FILE"),
            completion: .file())
    var passwordFile: String?
    @Option(help: ArgumentHelp("environment variable holding the .p12 password", valueName: "VAR"))
    var passwordEnv: String?
    @Flag(help: "ask for the .p12 password on the terminal (not echoed)")
    var passwordPrompt = false

    /// The largest password file read (a password, not a document).
    static let fileLimit = 4096

    /// The password these options say, `given` being `--password`'s; nil when none is given.
    /// At most one source; errors name the file or variable, never the password.
    func password(given: String?) throws(ValidationError) -> String? {
        let sources = [given != nil, passwordFile != nil, passwordEnv != nil, passwordPrompt].filter { $0 }.count
        if sources > 1 {
            throw ValidationError("give one of --password, --password-file, --password-env and --password-prompt")
        }
        if let given { return given }
        if let passwordFile {
            let raw: [UInt8]
            do throws(FileBytes.ReadError) {
                raw = try FileBytes.read(path: passwordFile, limit: Self.fileLimit)
            } catch {
                throw ValidationError("cannot read the .p12 password file \(passwordFile): \(error.description)")
            }
            return String(decoding: Self.withoutNewline(raw), as: UTF8.self)
        }
        if let passwordEnv {
            guard let value = getenv(passwordEnv) else {
                throw ValidationError("the environment variable \(passwordEnv) (the .p12 password) is not set")
            }
            return String(cString: value)
        }
        if passwordPrompt { return try Self.prompt() }
        return nil
    }

    /// `bytes` without one trailing newline (LF or CRLF): what `echo secret > file` leaves.
    static func withoutNewline(_ bytes: [UInt8]) -> ArraySlice<UInt8> {
        var n = bytes.count
        if n > 0 && bytes[n - 1] == 10 { n -= 1 }
        if n > 0 && bytes[n - 1] == 13 { n -= 1 }
        return bytes[..<n]
    }

    /// Asks on the controlling terminal (not standard input, which may carry a payload) with
    /// echo off, and restores the terminal however the read ends. Echo goes off before the
    /// question is asked: turning it off flushes pending input, which would lose an answer
    /// typed as soon as the question showed.
    static func prompt() throws(ValidationError) -> String {
        let fd = open("/dev/tty", O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { throw ValidationError("--password-prompt needs a terminal (no /dev/tty: \(String(cString: strerror(errno))))") }
        defer { close(fd) }
        var saved = termios()
        let isTerminal = tcgetattr(fd, &saved) == 0
        if isTerminal {
            var quiet = saved
            quiet.c_lflag &= ~tcflag_t(ECHO)
            tcsetattr(fd, TCSAFLUSH, &quiet)
        }
        let question = "Password for the .p12 file: "
        _ = question.withCString { write(fd, $0, strlen($0)) }
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while line.count < fileLimit {
            let n = read(fd, &byte, 1)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 || byte == 10 { break }
            line.append(byte)
        }
        if isTerminal { tcsetattr(fd, TCSAFLUSH, &saved) }
        _ = write(fd, "\n", 1)
        return String(decoding: withoutNewline(line), as: UTF8.self)
    }
}
