#if canImport(Glibc)
import Glibc
#endif
import PushCore

/// A program `swiftpush bench` starts (its mock, h2load): posix_spawn, and waits on the pid with
/// a bound. Foundation's `Process` is not used: its wait learns of the exit through a SIGCHLD
/// source, and was seen to miss it (issue 36), leaving the waiter hung on a zombie.
final class SpawnedProcess {
    /// The child's process id.
    let pid: pid_t
    private var reaped = false

    /// Starts `executable` (an absolute path) with `arguments`; standard input from /dev/null,
    /// standard output to `stdout` (nil: /dev/null), standard error to /dev/null unless
    /// `passErrors`. Throws when it cannot be started.
    init(_ executable: String, _ arguments: [String], stdout: String? = nil, passErrors: Bool = false) throws(SpawnError) {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdout ?? "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        if !passErrors { posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0) }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, executable, &actions, nil, argv, environ)
        guard rc == 0 else { throw SpawnError(description: "cannot start \(executable): \(String(cString: strerror(rc)))") }
        self.pid = pid
    }

    /// Why a program could not be started.
    struct SpawnError: Error, CustomStringConvertible { let description: String }

    /// Whether it has not ended yet (reaps it once it has).
    var isRunning: Bool { !reaped && exitCode(waitingMillis: 0) == nil }

    /// Its exit code (128 + signal when a signal ended it), waiting at most `waitingMillis` for
    /// it; nil while it runs.
    func exitCode(waitingMillis: Int) -> Int32? {
        if reaped { return -1 }
        let until = MonotonicTime.nanos() + UInt64(max(waitingMillis, 0)) * 1_000_000
        var status: Int32 = 0
        while true {
            let got = waitpid(pid, &status, WNOHANG)
            if got == pid {
                reaped = true
                return (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
            }
            if got < 0 && errno != EINTR { reaped = true; return -1 }
            if MonotonicTime.nanos() >= until { return nil }
            usleep(2_000) // the child tells nobody it ended but the SIGCHLD we do not catch
        }
    }

    /// Waits at most `seconds` for its end, then SIGKILLs and reaps it; its exit code.
    @discardableResult
    func wait(seconds: Int) -> Int32? {
        if let code = exitCode(waitingMillis: seconds * 1000) { return code }
        return kill()
    }

    /// SIGKILLs it and reaps it (bounded); its exit code.
    @discardableResult
    func kill() -> Int32? {
        if !reaped { _ = Glibc.kill(pid, SIGKILL) }
        return exitCode(waitingMillis: 10_000)
    }
}
