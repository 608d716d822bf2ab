#!/usr/bin/env python3
"""`swiftpush send --p12 FILE --password-prompt` asks on its controlling terminal (a real
pseudo-terminal: Python's pty.fork makes it the child's), with echo off, and connects with the
password typed. Part of Tests/cli/run.sh.

usage: password_prompt.py CLI PORT PKI      exit status 0 when every check holds
"""
import os
import pty
import select
import sys
import time

cli, port, pki = sys.argv[1:4]
token = "00fc13adff785122b4ad28809a3420982341241421348097878e577c991de8f0"
args = [cli, "send", "--host", "localhost", "--port", port, "--ca-file", f"{pki}/ca.pem",
        "--p12", f"{pki}/client.p12", "--password-prompt", "--topic", "com.example.app",
        "--token", token, "--body", "prompted"]


def run(password):
    """Runs the command on a new terminal, types `password` once it has asked; (status, all the terminal got)."""
    pid, fd = pty.fork()
    if pid == 0:
        os.execv(cli, args)
    seen = b""
    typed = False
    closed = False
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], deadline - time.monotonic())
        if not ready:
            break
        try:
            chunk = os.read(fd, 4096)
        except OSError:  # EIO: the child closed the terminal
            closed = True
            break
        if not chunk:
            closed = True
            break
        seen += chunk
        if not typed and b"Password for the .p12 file: " in seen:
            os.write(fd, password.encode() + b"\n")
            typed = True
    # A command still waiting after 60 s (it never asked, or lost the answer) is ended, not
    # waited for.
    if not closed:
        os.kill(pid, 9)
        seen += b"\n[killed: still running after 60 s]"
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    return os.waitstatus_to_exitcode(status), seen.decode("utf-8", "replace")


failures = 0
status, tty = run("secret")
if status == 0 and f"{token} ACCEPTED 200" in tty and "secret" not in tty:
    print("ok: --password-prompt: asked on the terminal, not echoed, the .p12 opened, ACCEPTED")
else:
    failures += 1
    print(f"FAILED: --password-prompt with the right password (exit {status})\n    " + tty.replace("\n", "\n    "))
status, tty = run("wrong")
if status == 2 and "wrong password" in tty:
    print("ok: --password-prompt with a wrong password: the .p12's error, exit 2")
else:
    failures += 1
    print(f"FAILED: --password-prompt with a wrong password (exit {status})\n    " + tty.replace("\n", "\n    "))
sys.exit(1 if failures else 0)
