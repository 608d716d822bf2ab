#!/usr/bin/env python3
"""Writes swiftpush(1) from the command's own help text, so the man page cannot drift from it.

usage: scripts/gen_manpage.py EXECUTABLE VERSION > swiftpush.1

Runs `EXECUTABLE --help`, reads the command list from it (ArgumentParser's SUBCOMMANDS), then
`EXECUTABLE <command> --help` for each command, and renders them as roff: NAME, SYNOPSIS (one line
per command, its USAGE), DESCRIPTION, COMMANDS (one subsection per command, each with its own
NAME, SYNOPSIS, DESCRIPTION and OPTIONS, taken from the command's OVERVIEW, USAGE, discussion and
OPTIONS), then EXAMPLES, ENVIRONMENT, FILES, EXIT STATUS and SEE ALSO. What a command says about
itself comes from its help text, so a command or option added to the CLI appears on the next
build; the sections after COMMANDS are written here (Tests/cli/manpage.sh checks every section
and renders the page with man or groff when the machine has one).
"""

import re
import subprocess
import sys


def help_text(exe, *args):
    out = subprocess.run([exe, *args, "--help"], check=True, capture_output=True, text=True,
                         env={"SWIFT_BACKTRACE": "enable=no", "PATH": "/usr/bin:/bin"})
    return out.stdout.rstrip("\n")


def roff(text):
    """Escapes one line of plain text for roff."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    if text.startswith((".", "'")):
        text = "\\&" + text
    return text


def parse_help(text):
    """Splits a command's --help into (overview, discussion lines, usage lines, options lines):
    ArgumentParser writes OVERVIEW: summary, the discussion, USAGE: ..., then OPTIONS: (and other
    titled option groups) up to the end."""
    lines = text.splitlines()
    overview, discussion, usage, options = "", [], [], []
    part = None
    for line in lines:
        if line.startswith("OVERVIEW: "):
            overview, part = line[len("OVERVIEW: "):], "overview"
        elif part == "overview" and line.strip():
            overview += " " + line.strip()  # a long summary wraps onto the next lines
        elif part == "overview":
            part = "discussion"
        elif line.startswith("USAGE: "):
            usage, part = [line[len("USAGE: "):]], "usage"
        elif part == "usage" and line.startswith("       "):
            usage.append(line.strip())
        elif re.match(r"^[A-Z][A-Za-z ]*:$", line) and part in ("usage", "options"):
            options.append(line)
            part = "options"
        elif part == "discussion":
            discussion.append(line)
        elif part == "options":
            options.append(line)
        elif part == "usage" and line.strip():
            part = "options"
            options.append(line)
    while discussion and not discussion[0].strip():
        discussion.pop(0)
    while discussion and not discussion[-1].strip():
        discussion.pop()
    return overview, discussion, usage, options


def block(w, lines):
    """Lines as they are (no filling), escaped."""
    w(".nf")
    for line in lines:
        w(roff(line))
    w(".fi")


def labelled(w, label, lines):
    """One part of a command's subsection: a bold label and its text, indented."""
    w(".PP")
    w(f".B {label}")
    w(".RS")
    block(w, lines)
    w(".RE")


# Hand-written sections: what no --help says. Tests/cli/manpage.sh checks that every option an
# example uses is in its command's help text, so an example cannot outlive a renamed flag.
EXAMPLES = [
    ("Send one alert with a token key:",
     ["swiftpush send --key AuthKey_ABC123DEFG.p8 --key-id ABC123DEFG --team-id DEF123GHIJ \\",
      "    --topic com.example.app --token 00fc13ad... --title Hello --body 'from swiftpush'"]),
    ("Send to the tokens of a file, a .p12 password read from a file (not shown by ps):",
     ["swiftpush send --p12 push.p12 --password-file p12.pass --topic com.example.app \\",
      "    --tokens-file tokens.txt --payload payload.json"]),
    ("Run a mock APNs server for tests:",
     ["swiftpush mock --cert server.pem --key server.key --port 2197 \\",
      "    --key-id TESTKEY001 --team-id TEAM123456 --auth-key AuthKey_TESTKEY001.p8"]),
    ("Check a worker configuration without connecting, then run the worker:",
     ["swiftpush worker --check-config worker.json && swiftpush worker --config worker.json"]),
    ("Queue notifications for the workers and follow their outcomes:",
     ["swiftpush enqueue --file notifications.jsonl", "swiftpush outcomes --follow"]),
]

ENVIRONMENT = [
    ("the variable named by \\fB\\-\\-password\\-env\\fR \\fIVAR\\fR",
     "send, bench, channels: the password of the .p12 file, instead of \\fB\\-\\-password\\fR, which \\fBps\\fR shows."),
    ("the variable named by \\fB\\-\\-redis\\-password\\-env\\fR \\fIVAR\\fR, or by \\fBpassword_env\\fR in a worker configuration",
     "worker, enqueue, outcomes, status: the Redis password."),
    ("SWIFT_BACKTRACE",
     "the Swift runtime's crash backtraces (\\fBenable=no\\fR turns them off)."),
]

FILES = [
    ("AuthKey_\\fIKEYID\\fR.p8", "a token signing key from Apple (\\fB\\-\\-key\\fR; a worker app's \\fBkey_file\\fR)."),
    ("\\fIcert\\fR.pem, \\fIcert\\fR.p12", "a client certificate and its key (\\fB\\-\\-cert\\fR, \\fB\\-\\-cert\\-key\\fR, \\fB\\-\\-p12\\fR)."),
    ("\\fIca\\fR.pem", "CA certificates to trust instead of the system's (\\fB\\-\\-ca\\-file\\fR; a mock's CA)."),
    ("\\fItokens\\fR.txt", "device tokens for \\fBsend \\-\\-tokens\\-file\\fR, one per line; '#' comments and blank lines are skipped."),
    ("worker.json", "the worker's configuration (\\fBworker \\-\\-config\\fR, \\fB\\-\\-check\\-config\\fR; \\fB\\-\\-redis\\-config\\fR reads its \\fBredis\\fR object). Unknown keys are refused."),
    ("completions/bash/swiftpush, completions/zsh/_swiftpush, completions/fish/swiftpush.fish",
     "shell completions, as \\fBswiftpush \\-\\-generate\\-completion\\-script\\fR \\fIshell\\fR writes them."),
]

EXIT_STATUS = [
    ("0", "success (\\fBsend\\fR: every notification accepted)."),
    ("1", "failure (\\fBsend\\fR: a notification rejected or failed, or no connection; \\fBworker\\fR: something stayed pending)."),
    ("2", "usage or configuration error: nothing was sent (\\fBworker \\-\\-check\\-config\\fR: the configuration is not valid)."),
    ("3", "\\fBsend\\fR: lines of \\fB\\-\\-tokens\\-file\\fR were not device tokens (reported INVALID); the others were sent and accepted."),
]


def tagged(w, rows):
    for tag, text in rows:
        w(".TP")
        w(tag)
        w(text)


def main():
    exe, version = sys.argv[1], sys.argv[2]
    top = help_text(exe)
    commands = []
    lines = top.splitlines()
    # ArgumentParser's list: "SUBCOMMANDS:", then "  name   summary" rows whose long summaries
    # wrap onto more deeply indented lines, up to a blank line.
    if "SUBCOMMANDS:" in lines:
        for line in lines[lines.index("SUBCOMMANDS:") + 1:]:
            if not line.strip():
                break
            m = re.match(r"^  (\S+)\s+(.*)$", line)
            if m:
                commands.append((m.group(1), m.group(2)))
    if not commands:
        sys.exit(f"gen_manpage: no command list in '{exe} --help'")
    helps = {name: parse_help(help_text(exe, name)) for name, _ in commands}
    top_overview, top_discussion, _, _ = parse_help(top)

    out = []
    w = out.append
    w(f'.TH SWIFTPUSH 1 "" "swiftpush {version}" "User Commands"')
    w(".\\\" Generated by scripts/gen_manpage.py from the command's --help output; do not edit.")
    w(".SH NAME")
    w("swiftpush \\- send Apple Push Notification service (APNs) notifications, run a mock APNs server")
    w(".SH SYNOPSIS")
    synopsis = [usage for name, _ in commands for usage in helps[name][2] or [f"swiftpush {name} [options]"]]
    # One usage a line, long ones wrapped at the page's width, left-aligned and unhyphenated.
    w(".ad l")
    w(".nh")
    for usage in synopsis + ["swiftpush [command] --help"]:
        w(".br")
        w(roff(usage))
    w(".hy")
    w(".ad b")
    w(".SH DESCRIPTION")
    w(roff(top_overview))
    if top_discussion:
        w(".PP")
        block(w, top_discussion)
    w(".PP")
    w("Commands (each described under COMMANDS):")
    tagged(w, [(f"\\fB{roff(name)}\\fR", roff(helps[name][0] or summary)) for name, summary in commands])
    w(".SH COMMANDS")
    for name, _ in commands:
        overview, discussion, usage, options = helps[name]
        w(f".SS {roff(name)}")
        labelled(w, "NAME", [f"swiftpush {name} - {overview}"])
        labelled(w, "SYNOPSIS", usage or [f"swiftpush {name} [options]"])
        labelled(w, "DESCRIPTION", discussion or [overview])
        if options:
            labelled(w, "OPTIONS", options)
    w(".SH EXAMPLES")
    for text, command in EXAMPLES:
        w(".PP")
        w(roff(text))
        w(".RS")
        block(w, command)
        w(".RE")
    w(".SH ENVIRONMENT")
    tagged(w, ENVIRONMENT)
    w(".SH FILES")
    tagged(w, FILES)
    w(".SH EXIT STATUS")
    tagged(w, EXIT_STATUS)
    w(".SH SEE ALSO")
    w("The library this command is built on: libswiftpush.so, its header swiftpush.h and")
    w("\\fBpkg\\-config \\-\\-cflags \\-\\-libs swiftpush\\fR.")
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
