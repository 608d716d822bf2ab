#!/usr/bin/env python3
"""`swiftpush enqueue --file` shows a progress line on a terminal's standard error (a real
pseudo-terminal, Python's pty) for more than 5000 lines, ending complete; nothing with --quiet or
when standard error is not a terminal; --campaign NAME lands on every entry that names none and
leaves a line's own campaign alone. Part of Tests/redis/run.sh.

usage: enqueue_progress.py CLI OUT_DIR -- REDIS-OPTIONS...    exit status 0 when every check holds
"""
import json
import os
import pty
import re
import subprocess
import sys

cli, out = sys.argv[1:3]
redis_options = sys.argv[sys.argv.index("--") + 1:]
COUNT = 6000
path = os.path.join(out, "progress.jsonl")
with open(path, "w") as f:
    for i in range(COUNT):
        line = {"id": f"p-{i}", "app": "demo", "token": "00" * 32, "payload": {"aps": {"alert": str(i)}}}
        if i == 0:
            line["campaign"] = "own"
        f.write(json.dumps(line) + "\n")
failed = 0


def check(name, condition, detail=""):
    global failed
    print(("ok: " if condition else "FAILED: ") + name + ("" if condition else f" ({detail})"))
    failed += 0 if condition else 1


def on_terminal(args):
    """Runs enqueue with standard error on a pseudo-terminal: (status, stdout, what the terminal got)."""
    master, slave = pty.openpty()
    p = subprocess.Popen([cli, "enqueue", "--batch", "1", *redis_options, *args], stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=slave)
    os.close(slave)
    seen = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: every writer of the terminal has closed it
            break
        if not chunk:
            break
        seen += chunk
    stdout = p.stdout.read().decode()
    os.close(master)
    return p.wait(timeout=60), stdout, seen.decode(errors="replace")


status, stdout, tty = on_terminal(["--shard", "prog", "--file", path, "--campaign", "spring"])
check(f"{COUNT} lines on a terminal: a progress line with count, rate and time left, the last one complete",
      status == 0 and stdout.strip() == f"enqueued {COUNT} notifications in {COUNT} entries"
      and re.search(rf"swiftpush: {COUNT}/{COUNT} \(100%\), \d+/s, done in \d+s", tty) is not None,
      f"status {status}, stdout {stdout!r}, terminal {tty[-300:]!r}")

status, stdout, tty = on_terminal(["--shard", "quiet", "--file", path, "--quiet"])
check("--quiet: nothing on the terminal", status == 0 and tty.strip() == "", f"status {status}, terminal {tty!r}")

with open(os.path.join(out, "progress-stderr.txt"), "w+") as err:
    status = subprocess.call([cli, "enqueue", "--batch", "1", *redis_options, "--shard", "file", "--file", path],
                             stdout=subprocess.DEVNULL, stderr=err)
    err.seek(0)
    text = err.read()
check("standard error a file: no progress line", status == 0 and text == "", f"status {status}, stderr {text!r}")

sys.exit(1 if failed else 0)
