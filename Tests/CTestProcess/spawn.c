// See include/CTestProcess.h.
#define _GNU_SOURCE
#include "CTestProcess.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

// ---- the child, between fork and exec: async-signal-safe calls only ----

// Reports `err` on the error pipe and ends the child.
static void child_fail(int pipe_fd, int err) {
    ssize_t unused = write(pipe_fd, &err, sizeof err);
    (void)unused;
    _exit(127);
}

// Opens `path` (NULL: /dev/null) onto descriptor `target`.
static void child_redirect(int pipe_fd, const char *path, int flags, int target) {
    int fd = open(path ? path : "/dev/null", flags | O_CLOEXEC, 0600);
    if (fd < 0) child_fail(pipe_fd, errno);
    if (dup2(fd, target) < 0) child_fail(pipe_fd, errno); // dup2 clears O_CLOEXEC on target
    if (fd != target) close(fd);
}

// Closes every descriptor from `first` up, but `keep`.
static void child_close_from(int first, int keep) {
#ifdef SYS_close_range
    if (keep > first && syscall(SYS_close_range, first, keep - 1, 0) == 0 &&
        syscall(SYS_close_range, keep + 1, ~0U, 0) == 0) return;
#endif
    long max = sysconf(_SC_OPEN_MAX);
    if (max < 0 || max > 1 << 20) max = 1 << 20;
    for (int fd = first; fd < max; fd++) if (fd != keep) close(fd);
}

struct spawn_request {
    const char *path;
    char *const *argv;
    char *const *envp;
    const char *stdin_path, *stdout_path, *stderr_path;
    int stderr_to_stdout;
    pid_t result;
    int error;
    int done;
};

static void run_request(struct spawn_request *r) {
    r->result = -1;
    int pipe_fds[2];
    if (pipe2(pipe_fds, O_CLOEXEC) != 0) { r->error = errno; return; }
    // Both ends above 2, so that redirecting 0, 1 and 2 in the child cannot overwrite them.
    for (int i = 0; i < 2; i++) {
        if (pipe_fds[i] <= 2) {
            int moved = fcntl(pipe_fds[i], F_DUPFD_CLOEXEC, 3);
            close(pipe_fds[i]);
            pipe_fds[i] = moved;
        }
    }
    if (pipe_fds[0] < 0 || pipe_fds[1] < 0) {
        r->error = errno;
        if (pipe_fds[0] >= 0) close(pipe_fds[0]);
        if (pipe_fds[1] >= 0) close(pipe_fds[1]);
        return;
    }
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0) {
        int w = pipe_fds[1];
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) child_fail(w, errno);
        // The parent may have died before the line above: then nobody would kill this child.
        if (getppid() != parent) _exit(127);
        setpgid(0, 0);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        struct sigaction dfl;
        memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        for (int s = 1; s < NSIG; s++) {
            if (s == SIGKILL || s == SIGSTOP) continue;
            sigaction(s, &dfl, NULL); // fails harmlessly for the signals it may not touch
        }
        child_redirect(w, r->stdin_path, O_RDONLY, 0);
        child_redirect(w, r->stdout_path, O_WRONLY | O_CREAT | O_TRUNC, 1);
        if (r->stderr_to_stdout) {
            if (dup2(1, 2) < 0) child_fail(w, errno);
        } else if (r->stderr_path) {
            child_redirect(w, r->stderr_path, O_WRONLY | O_CREAT | O_TRUNC, 2);
        }
        child_close_from(3, w);
        execve(r->path, r->argv, r->envp);
        child_fail(w, errno);
    }
    close(pipe_fds[1]);
    if (pid < 0) { r->error = errno; close(pipe_fds[0]); return; }
    // The pipe closes on exec (O_CLOEXEC): no bytes means the program runs.
    int err = 0;
    ssize_t n;
    do { n = read(pipe_fds[0], &err, sizeof err); } while (n < 0 && errno == EINTR);
    close(pipe_fds[0]);
    if (n == (ssize_t)sizeof err) {
        int status;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
        r->error = err;
        return;
    }
    r->result = pid;
    r->error = 0;
}

// ---- the spawner thread ----

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static struct spawn_request *pending;
static int started;

static void *spawner(void *unused) {
    (void)unused;
    pthread_mutex_lock(&lock);
    for (;;) {
        while (!pending) pthread_cond_wait(&changed, &lock);
        struct spawn_request *r = pending;
        pending = NULL;
        run_request(r);
        r->done = 1;
        pthread_cond_broadcast(&changed);
    }
    return NULL;
}

pid_t ctp_spawn(const char *path, char *const argv[], char *const envp[],
                const char *stdin_path, const char *stdout_path, const char *stderr_path,
                int stderr_to_stdout, int *error) {
    struct spawn_request r = {path, argv, envp, stdin_path, stdout_path, stderr_path, stderr_to_stdout, -1, 0, 0};
    pthread_mutex_lock(&lock);
    if (!started) {
        pthread_t thread;
        int rc = pthread_create(&thread, NULL, spawner, NULL);
        if (rc != 0) {
            pthread_mutex_unlock(&lock);
            *error = rc;
            return -1;
        }
        pthread_detach(thread);
        started = 1;
    }
    while (pending) pthread_cond_wait(&changed, &lock); // one request at a time
    pending = &r;
    pthread_cond_broadcast(&changed);
    while (!r.done) pthread_cond_wait(&changed, &lock);
    pthread_mutex_unlock(&lock);
    *error = r.error;
    return r.result;
}

// ---- waiting ----

static long long now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

// Whether child `pid` has ended (1), still runs (0), or cannot be asked about (-1).
static int ended_unreaped(pid_t pid) {
    siginfo_t info;
    memset(&info, 0, sizeof info);
    int rc;
    do { rc = waitid(P_PID, (id_t)pid, &info, WEXITED | WNOHANG | WNOWAIT); } while (rc < 0 && errno == EINTR);
    if (rc < 0) return -1;
    return info.si_pid == pid ? 1 : 0;
}

int ctp_wait(pid_t pid, int timeout_ms) {
    long long deadline = now_ms() + (timeout_ms < 0 ? 0 : timeout_ms);
#ifdef SYS_pidfd_open
    int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
#else
    int pidfd = -1;
#endif
    for (;;) {
        int state = ended_unreaped(pid);
        long long left = deadline - now_ms();
        if (state != 0 || left <= 0) {
            int e = errno;
            if (pidfd >= 0) close(pidfd);
            errno = e;
            return state;
        }
        if (pidfd >= 0) {
            struct pollfd p = {pidfd, POLLIN, 0};
            poll(&p, 1, left > 1000 ? 1000 : (int)left); // readable once the child has ended
        } else {
            struct timespec pause = {0, 1000000}; // no pidfd (kernel < 5.3): look again in 1 ms
            nanosleep(&pause, NULL);
        }
    }
}

int ctp_reap(pid_t pid, int *code, int *signal) {
    int status = 0;
    pid_t got;
    do { got = waitpid(pid, &status, WNOHANG); } while (got < 0 && errno == EINTR);
    if (got < 0) return -1;
    if (got == 0) return 0;
    *code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    *signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    return 1;
}
