#!/usr/bin/env python3
"""`swiftpush send --tokens-file` shows a progress line on a terminal's standard error (a real
pseudo-terminal, Python's pty), and nothing with --quiet, when standard error is not a
terminal, or for a few tokens. Part of Tests/cli/run.sh.

usage: progress.py CLI PORT PKI OUT_DIR      exit status 0 when every check holds
"""
import os
import pty
import re
import secrets
import subprocess
import sys

cli, port, pki, out = sys.argv[1:5]
common = [cli, "send", "--host", "localhost", "--port", port, "--ca-file", f"{pki}/ca.pem",
          "--key", f"{pki}/AuthKey_TESTKEY001.p8", "--key-id", "TESTKEY001", "--team-id", "TEAM123456",
          "--topic", "com.example.app", "--body", "progress"]
COUNT = 6000
many = os.path.join(out, "progress-tokens.txt")
with open(many, "w") as f:
    f.writelines(secrets.token_hex(32) + "\n" for _ in range(COUNT))
few = os.path.join(out, "progress-few.txt")
with open(few, "w") as f:
    f.writelines(secrets.token_hex(32) + "\n" for _ in range(2))


def on_terminal(args):
    """Runs the command with standard error on a pseudo-terminal; (status, stdout, what the terminal got)."""
    master, slave = pty.openpty()
    stdout = os.path.join(out, "progress-stdout.txt")
    with open(stdout, "wb") as sink:
        p = subprocess.Popen(common + args, stdin=subprocess.DEVNULL, stdout=sink, stderr=slave)
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
    os.close(master)
    status = p.wait(timeout=120)
    return status, open(stdout).read(), seen.decode("utf-8", "replace")


failures = []


def check(name, condition, detail=""):
    print(("ok: " if condition else "FAILED: ") + name)
    if not condition:
        failures.append(name)
        print("    " + detail[-2000:].replace("\n", "\n    "))


status, stdout, tty = on_terminal(["--tokens-file", many])
lines = re.split(r"[\r\n]", tty)
progress = [l for l in lines if re.search(rf"swiftpush: \d+/{COUNT} \(\d+%\), \d+/s, ", l)]
check(f"{COUNT} tokens on a terminal: progress lines with count, rate and time left, the last one complete",
      status == 0 and stdout.endswith(f"{COUNT} notifications: {COUNT} accepted, 0 rejected, 0 failed\n")
      and len(progress) >= 1 and re.search(rf"swiftpush: {COUNT}/{COUNT} \(100%\), \d+/s, done in \d+s", tty) is not None
      and "\x1b[K" in tty, f"status {status}\n{tty}")

status, stdout, tty = on_terminal(["--tokens-file", many, "--quiet"])
check("--quiet: nothing on the terminal", status == 0 and tty == "", f"status {status}\n{tty}")

status, stdout, tty = on_terminal(["--tokens-file", few])
check("two tokens: nothing on the terminal", status == 0 and tty == "", f"status {status}\n{tty}")

with open(os.path.join(out, "progress-stderr.txt"), "wb") as err, open(os.devnull, "wb") as devnull:
    status = subprocess.call(common + ["--tokens-file", many], stdin=subprocess.DEVNULL, stdout=devnull, stderr=err)
check("standard error in a file: no progress line", status == 0 and os.path.getsize(err.name) == 0,
      open(err.name).read())

sys.exit(1 if failures else 0)
