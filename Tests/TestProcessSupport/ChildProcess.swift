import CTestProcess
#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// A process a test starts (a server, a helper script, a tool), which cannot outlive the test
/// process and is never waited for without a bound.
///
/// Foundation's `Process` hung in `make test` waiting for a child that was already a zombie
/// (issue 36): it learns of the exit through a SIGCHLD source that can miss it. This
/// waits on the pid itself (`waitpid`, a pidfd for the wake-up), at most for a given time,
/// then SIGKILLs the child's process group and reaps it. The child is forked on one long-lived
/// thread with `PR_SET_PDEATHSIG` = SIGKILL, so it dies with the test process however that
/// ends (a crash, a SIGKILL at the suite's bound), and gets no descriptor of ours but 0, 1, 2
/// (`ctp_spawn` in CTestProcess).
public final class ChildProcess: Sendable {
    /// Where a standard stream goes.
    public enum Output: Sendable {
        /// /dev/null.
        case null
        /// This file, created or truncated.
        case file(String)
        /// Standard error only: wherever standard output goes.
        case standardOutput
        /// Standard error only: the test process's own (a helper that explains a failure in
        /// the test log; never for a server, which would hold the log open).
        case inherited
    }

    /// How a child ended.
    public enum Termination: Equatable, Sendable {
        /// It exited with this code.
        case exited(Int32)
        /// A signal ended it.
        case signaled(Int32)

        /// The exit code, or 128 + the signal, as a shell reports it.
        public var code: Int32 {
            switch self {
            case .exited(let c): return c
            case .signaled(let s): return 128 + s
            }
        }
    }

    /// Why a child could not be started.
    public struct StartError: Error, CustomStringConvertible {
        /// What failed, with the program and the system's reason.
        public let description: String
    }

    /// The child's process id (and process group id).
    public let pid: pid_t
    /// The program that was started.
    public let executable: String
    /// Set once the child has been reaped: its pid is then never used again.
    private let ended = Mutex<Termination?>(nil)

    /// Starts `executable` (an absolute path) with `arguments`; `environment` replaces the
    /// test process's own when given. Standard input from `stdin` (nil: /dev/null).
    public init(_ executable: String, _ arguments: [String], environment: [String: String]? = nil,
                stdin: String? = nil, stdout: Output = .null, stderr: Output = .null) throws {
        self.executable = executable
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let envStrings = environment.map { $0.map { "\($0.key)=\($0.value)" } } ?? Self.currentEnvironment()
        let envp = envStrings.map { strdup($0) } + [nil]
        defer { envp.forEach { free($0) } }
        func path(_ o: Output) -> String? {
            switch o {
            case .file(let p): return p
            case .null: return "/dev/null"
            case .standardOutput, .inherited: return nil // ctp_spawn: merged, or left as ours
            }
        }
        let stderrPath = path(stderr)
        var error: Int32 = 0
        let pid = Self.withOptionalCString(stdin) { i in
            Self.withOptionalCString(path(stdout)) { o in
                Self.withOptionalCString(stderrPath) { e in
                    ctp_spawn(executable, argv, envp, i, o, e, { if case .standardOutput = stderr { return 1 }; return 0 }(), &error)
                }
            }
        }
        guard pid > 0 else {
            throw StartError(description: "cannot start \(executable): \(String(cString: strerror(error)))")
        }
        self.pid = pid
    }

    /// Runs a program to its end, at most `seconds` (then it is killed); its termination and
    /// what it wrote to standard output (and standard error, with `mergeErrors`), read with
    /// plain open/read. `input`, when given, is its standard input.
    public static func run(_ executable: String, _ arguments: [String], environment: [String: String]? = nil,
                           input: [UInt8]? = nil, mergeErrors: Bool = false, passErrors: Bool = false,
                           seconds: Double = 120, whileRunning: () -> Void = {}) -> (termination: Termination?, output: String) {
        let directory = TestFiles.temporaryDirectory("run")
        defer { TestFiles.remove(directory) }
        var stdinPath: String?
        if let input {
            stdinPath = directory + "/stdin"
            guard TestFiles.write(input, to: stdinPath!) else { return (nil, "cannot write \(stdinPath!)") }
        }
        let out = directory + "/stdout"
        let stderr: Output = mergeErrors ? .standardOutput : passErrors ? .inherited : .null
        guard let child = try? ChildProcess(executable, arguments, environment: environment, stdin: stdinPath,
                                            stdout: .file(out), stderr: stderr) else {
            return (nil, "cannot start \(executable)")
        }
        whileRunning()
        let termination = child.wait(seconds: seconds)
        return (termination, TestFiles.readText(out) ?? "")
    }

    /// True until the child has ended (it is reaped then).
    public var isRunning: Bool { poll(milliseconds: 0) == nil }

    /// How it ended, waiting at most `milliseconds` for that; nil while it runs. The wait holds
    /// no lock (another thread may signal the child meanwhile); the reaping does, so that a
    /// signal never reaches a pid the system has given to someone else.
    @discardableResult
    public func poll(milliseconds: Int) -> Termination? {
        if let known = ended.withLock({ $0 }) { return known }
        let state = ctp_wait(pid, Int32(clamping: milliseconds))
        let lookError = state < 0 ? errno : 0
        return ended.withLock { ended in
            if let ended { return ended }
            var code: Int32 = 0, signal: Int32 = 0
            switch ctp_reap(pid, &code, &signal) {
            case 1: ended = signal != 0 ? .signaled(signal) : .exited(code)
            case 0: break
            default:
                // Not our child any more (someone else reaped it): gone, how is unknown.
                if errno == ECHILD || lookError == ECHILD { ended = .exited(-1) }
            }
            return ended
        }
    }

    /// Sends `signal` to the child (and its process group), unless it has been reaped.
    public func signal(_ signal: Int32) {
        ended.withLock { ended in
            if ended == nil { _ = Glibc.kill(-pid, signal); _ = Glibc.kill(pid, signal) }
        }
    }

    /// Waits for the child's end at most `seconds`; past that it is SIGKILLed (its process
    /// group with it) and reaped. Its termination; nil only when even SIGKILL did not end it
    /// within 10 s (a process stuck in the kernel).
    @discardableResult
    public func wait(seconds: Double) -> Termination? {
        if let t = poll(milliseconds: Int(seconds * 1000)) { return t }
        return kill()
    }

    /// SIGKILLs the child and its process group, and reaps it (bounded); how it ended.
    @discardableResult
    public func kill() -> Termination? {
        signal(SIGKILL)
        return poll(milliseconds: 10_000)
    }

    deinit { kill() }

    private static func withOptionalCString<R>(_ s: String?, _ body: (UnsafePointer<CChar>?) -> R) -> R {
        guard let s else { return body(nil) }
        return s.withCString { body($0) }
    }

    private static func currentEnvironment() -> [String] {
        var result: [String] = []
        var p = environ
        while let entry = p.pointee {
            result.append(String(cString: entry))
            p += 1
        }
        return result
    }
}
