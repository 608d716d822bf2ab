#!/usr/bin/env python3
"""Runs one test step with a bound on its time and a check that it leaves no process behind
(issue 36). Used by scripts/run-swift-tests.sh (the `swift test` step) and
scripts/in-own-group.sh (each shell suite of `make test`).

    bounded-run.py --bound SECONDS [--label TEXT] [--bound-name NAME] [--swift-testing] [--grace SECONDS] -- COMMAND...

- This process makes itself a child subreaper (prctl PR_SET_CHILD_SUBREAPER): whatever the
  command starts and then abandons (a daemon, a server whose parent exited) is re-parented to
  it instead of to init. Its descendants are therefore exactly the step's own processes, found
  from /proc/<pid>/task/<tid>/children downwards: never the caller's, its siblings', or any
  other process on the machine (CI runs this inside a harness with processes of its own).
- The command runs in a process group of its own and gets SIGKILL if this process dies.
- Past the bound, it prints what was still running (with --swift-testing: the suites and tests
  that started and did not finish, from the live output), SIGKILLs every descendant, and exits
  124.
- Once the command has ended, its descendants have GRACE seconds (default 10: a helper's
  owner watcher polls once a second) to end; any still there are listed, SIGKILLed and fail
  the step.
- With --swift-testing, the command's output (stdout and stderr, merged) is passed through
  and read: an issue Swift Testing recorded outside any test ("Test «unknown» recorded an
  issue", which fails no test and no suite) fails the step.
Exit status: the command's own when it failed; otherwise 1 for leftovers or an issue outside a
test; 124 at the bound; 2 for a usage or setup error.
"""
import argparse
import ctypes
import os
import pty
import re
import signal
import sys
import threading
import time
import tty

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36

# Swift Testing's own words for an issue recorded while no test was current.
UNKNOWN_TEST = "Test \u00abunknown\u00bb"
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
# "◇ Suite X started." / "◇ Test X started." and their ends: passed, failed, skipped.
STARTED = re.compile(r"^\S+ (Suite|Test) (.+?) started\.$")
ENDED = re.compile(r"^\S+ (Suite|Test) (.+?) (?:passed|failed|skipped)\b")


def log(message):
    print(f"bounded-run: {message}", file=sys.stderr, flush=True)


class Libc:
    def __init__(self):
        self.lib = ctypes.CDLL(None, use_errno=True)
        self.lib.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]

    def prctl(self, option, value):
        if self.lib.prctl(option, value, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), f"prctl({option}, {value})")


def children_of(pid):
    """The direct children of `pid` (every thread's), from /proc; [] when it is gone."""
    found = []
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                found += [int(p) for p in f.read().split()]
        except FileNotFoundError:
            return children_by_parent(pid)  # a kernel without CONFIG_PROC_CHILDREN
        except OSError:
            pass
    return found


def children_by_parent(pid):
    """The fallback: processes whose parent is `pid`, from each /proc/N/stat."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        # The field after the command's closing parenthesis: state, then the parent's pid.
        fields = stat[stat.rfind(")") + 2:].split()
        if len(fields) > 1 and int(fields[1]) == pid:
            found.append(int(entry))
    return found


def descendants():
    """Every process under this one (orphans of the step are re-parented to it)."""
    seen, todo = [], children_of(os.getpid())
    while todo:
        pid = todo.pop()
        if pid in seen:
            continue
        seen.append(pid)
        todo += children_of(pid)
    return seen


def describe(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            command = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
        state = stat[stat.rfind(")") + 2:].split()[0]
    except OSError:
        return f"{pid} (gone)"
    return f"{pid} [{state}] {command or '(no command line: a zombie)'}"


def reap():
    """Reaps every child that has ended; returns their pids and wait statuses."""
    ended = []
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return ended
        if pid == 0:
            return ended
        ended.append((pid, status))


def live_descendants():
    """Descendants that are not zombies (a zombie child of ours is reaped first)."""
    reap()
    alive = []
    for pid in descendants():
        try:
            with open(f"/proc/{pid}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        if stat[stat.rfind(")") + 2:].split()[0] != "Z":
            alive.append(pid)
    return alive


def kill_all():
    """SIGKILLs every descendant until none is left (bounded: 30 s)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        pids = live_descendants()
        if not pids:
            return True
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.05)  # the kernel delivers and the zombies appear; nothing to wait on
    return not live_descendants()


class SwiftTestingWatcher:
    """Passes the command's output through and keeps what it says about tests."""

    def __init__(self, stream):
        self.stream = stream
        self.running = {}  # "Suite X" / "Test Y" -> how many started and not ended
        self.order = []
        self.unknown = []
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def lines(self):
        """The stream's lines; a terminal's end (every writer gone) reads as EIO, not EOF."""
        while True:
            try:
                line = self.stream.readline()
            except OSError:
                return
            if not line:
                return
            yield line

    def run(self):
        out = sys.stdout.buffer
        for raw in self.lines():
            out.write(raw)
            out.flush()
            line = ANSI.sub("", raw.decode(errors="replace")).rstrip("\n")
            with self.lock:
                if UNKNOWN_TEST in line:
                    self.unknown.append(line)
                m = STARTED.match(line)
                if m and m.group(2) != "run":  # "Test run started.": the whole run, not a test
                    key = f"{m.group(1)} {m.group(2)}"
                    self.running[key] = self.running.get(key, 0) + 1
                    if key not in self.order:
                        self.order.append(key)
                    continue
                m = ENDED.match(line)
                if m:
                    key = f"{m.group(1)} {m.group(2)}"
                    if self.running.get(key, 0) > 0:
                        self.running[key] -= 1

    def unfinished(self):
        with self.lock:
            return [k for k in self.order if self.running.get(k, 0) > 0]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bound", type=float, required=True, help="seconds the command may run")
    parser.add_argument("--label", default="the step", help="what the command is, for messages")
    parser.add_argument("--bound-name", default="the bound", help="the setting that gives the bound, for messages")
    parser.add_argument("--grace", type=float, default=10, help="seconds the leftovers have to end")
    parser.add_argument("--swift-testing", action="store_true", help="read the output as swift test's")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command")

    libc = Libc()
    try:
        libc.prctl(PR_SET_CHILD_SUBREAPER, 1)
    except OSError as e:
        log(f"cannot become a child subreaper ({e}): leftover processes could not be found")
        return 2
    start = time.monotonic()
    read_end = None
    if args.swift_testing:
        # A terminal, not a pipe: the test runner's output is then line-buffered, so that the
        # suites and tests that started are known as they start (through a pipe it sat in a
        # buffer, and a hung run showed nothing). Raw mode: no "\r" added to each line.
        try:
            read_end, write_end = pty.openpty()
            tty.setraw(write_end)
        except OSError as e:
            # No terminals here (no /dev/pts): a pipe, whose output may lag behind the run.
            log(f"no pseudo-terminal ({e}): reading the output through a pipe")
            read_end, write_end = os.pipe()

    pid = os.fork()
    if pid == 0:
        try:
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
            os.setpgid(0, 0)
            if read_end is not None:
                os.dup2(write_end, 1)
                os.dup2(write_end, 2)
                # Swift Testing would colour its output for a terminal: plain text for the log.
                os.environ.setdefault("NO_COLOR", "1")
                os.close(read_end)
                os.close(write_end)
            os.execvp(command[0], command)
        except OSError as e:
            print(f"bounded-run: cannot run {command[0]}: {e}", file=sys.stderr, flush=True)
        os._exit(127)

    watcher = None
    if read_end is not None:
        os.close(write_end)
        watcher = SwiftTestingWatcher(os.fdopen(read_end, "rb"))

    def interrupted(signum, _frame):
        log(f"{args.label}: signal {signum}, killing every process of the step")
        kill_all()
        os._exit(128 + signum)

    signal.signal(signal.SIGINT, interrupted)
    signal.signal(signal.SIGTERM, interrupted)
    signal.signal(signal.SIGHUP, interrupted)

    status = None
    deadline = start + args.bound
    while status is None:
        for ended, wait_status in reap():
            if ended == pid:
                status = wait_status
        if status is None:
            if time.monotonic() >= deadline:
                break
            time.sleep(0.1)  # between looks at the child: no signal is waited for here

    if status is None:
        log(f"BOUND: {args.label} still running after {args.bound:.0f} s ({args.bound_name})")
        if watcher:
            unfinished = watcher.unfinished()
            if unfinished:
                log("started and not finished:")
                for name in unfinished:
                    log(f"  {name}")
            else:
                log("no suite or test had started (or all had finished): stuck before or after them")
        for p in live_descendants():
            log(f"  killing {describe(p)}")
        kill_all()
        return 124

    code = os.waitstatus_to_exitcode(status) if hasattr(os, "waitstatus_to_exitcode") else (
        status >> 8 if status & 0x7F == 0 else 128 + (status & 0x7F))
    if code < 0:
        code = 128 - code
    elapsed = time.monotonic() - start

    # The command has ended: its helpers have `grace` seconds to follow it.
    until = time.monotonic() + args.grace
    left = live_descendants()
    while left and time.monotonic() < until:
        time.sleep(0.1)  # leftovers announce their end to nobody
        left = live_descendants()
    failed = False
    if left:
        log(f"LEFTOVER: {args.label} left {len(left)} process(es) running {args.grace:.0f} s after it ended:")
        for p in left:
            log(f"  {describe(p)}")
        kill_all()
        failed = True
    if watcher:
        # The pipe ends once every process holding it is gone (killed above, if need be).
        watcher.thread.join(timeout=10)
        if watcher.unknown:
            log(f"ISSUES OUTSIDE A TEST: {len(watcher.unknown)} issue(s) recorded for no test "
                f"(an expectation made off the test's task: no test or suite failed for them):")
            for line in watcher.unknown[:20]:
                log(f"  {line}")
            failed = True
    log(f"{args.label}: exit {code} after {elapsed:.0f} s")
    if code != 0:
        return code
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
