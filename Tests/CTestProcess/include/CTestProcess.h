// Process start and bounded wait for the Swift tests (TestProcessSupport's ChildProcess).
// In C because what a forked child of a multithreaded process may do before exec is limited
// to async-signal-safe calls, which Swift code cannot promise.
#ifndef CTESTPROCESS_H
#define CTESTPROCESS_H

#include <sys/types.h>

/// Starts `path` with `argv` and `envp` (both NULL-terminated) on the process's one spawner
/// thread, a thread that lives as long as the process: the child's PR_SET_PDEATHSIG follows
/// the thread that forked it, so a child forked on a pool thread that later ends would be
/// killed then, and one forked on a thread that never ends dies only with the process.
/// The child gets SIGKILL when the test process dies (however it dies), a process group of
/// its own, default signal dispositions and an empty signal mask (the test runner may block
/// or ignore signals, and a server inheriting that would not stop on SIGTERM), standard input
/// from `stdin_path`, standard output to `stdout_path` (created or truncated), standard error
/// to `stderr_path` (or to standard output when `stderr_to_stdout` is 1, or left as the test
/// process's own when `stderr_path` is NULL and `stderr_to_stdout` is 0: a helper that explains
/// its failure in the test log), and no other descriptor. A NULL `stdin_path` or `stdout_path`
/// is /dev/null. Returns the child's pid, or -1 with `*error` set to the errno of the step that
/// failed (the exec's own, when the program could not be run).
pid_t ctp_spawn(const char *path, char *const argv[], char *const envp[],
                const char *stdin_path, const char *stdout_path, const char *stderr_path,
                int stderr_to_stdout, int *error);

/// Waits at most `timeout_ms` for child `pid` to end, without reaping it (the caller reaps it
/// with `ctp_reap` under its own lock, so that no signal can reach a reused pid) and without
/// ever blocking longer: a pidfd polled for the bound (Linux 5.3+), else the child looked at
/// every millisecond. Returns 1 when it has ended, 0 when it still runs at the bound, -1 on an
/// error (errno; ECHILD: not a child of ours, or already reaped).
int ctp_wait(pid_t pid, int timeout_ms);

/// Reaps child `pid` if it has ended: 1 and its exit code (`*code`), or the signal that ended it
/// (`*signal`, then `*code` is -1); 0 while it runs; -1 on an error (errno).
int ctp_reap(pid_t pid, int *code, int *signal);

#endif
