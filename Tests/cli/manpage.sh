#!/usr/bin/env bash
# swiftpush(1) as scripts/gen_manpage.py writes it from the command's help: the sections a man
# page has (NAME, SYNOPSIS, DESCRIPTION, COMMANDS with NAME/SYNOPSIS/DESCRIPTION per command,
# EXAMPLES, ENVIRONMENT, FILES, EXIT STATUS), every option an example uses known to its
# command, and the page rendered without a warning by man -l or groff when the machine has one
# (neither is needed to build; without both, the rendering is not checked and says so).
# usage: Tests/cli/manpage.sh CLI     (the swiftpush-cli executable); exit status 0 when all hold
set -euo pipefail
cd "$(dirname "$0")/../.."
cli=${1:?usage: manpage.sh CLI}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
python3 scripts/gen_manpage.py "$cli" test > "$out/swiftpush.1"
python3 - "$cli" "$out/swiftpush.1" <<'PY'
import re, subprocess, sys
cli, page = sys.argv[1], open(sys.argv[2]).read()
lines = page.splitlines()
sections = [l[4:] for l in lines if l.startswith(".SH ")]
expected = ["NAME", "SYNOPSIS", "DESCRIPTION", "COMMANDS", "EXAMPLES", "ENVIRONMENT", "FILES", "EXIT STATUS", "SEE ALSO"]
sections = [s.strip('"') for s in sections]
assert sections == [e.strip('"') for e in expected], sections
top = subprocess.run([cli, "--help"], capture_output=True, text=True, check=True).stdout
commands = re.findall(r"^  (\S+)\s", top.split("SUBCOMMANDS:")[1].split("\n\n")[0], re.M)
assert "send" in commands and "worker" in commands, commands
for name in commands:
    start = lines.index(f".SS {name}")
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith((".SS ", ".SH "))), len(lines))
    part = lines[start:end]
    labels = [part[i + 1] for i, l in enumerate(part) if l == ".PP" and i + 1 < len(part) and part[i + 1].startswith(".B ")]
    assert labels[:3] == [".B NAME", ".B SYNOPSIS", ".B DESCRIPTION"], (name, labels)
    assert any(l.startswith(f"swiftpush {name} \\- ") for l in part), (name, part[:8])
    # The synopsis lists the command at the top too.
    assert any(l.startswith(f"swiftpush {name}") for l in lines[lines.index(".SH SYNOPSIS"):lines.index(".SH DESCRIPTION")]), name
# Every option of every example is in its command's help.
examples = "\n".join(lines[lines.index(".SH EXAMPLES"):lines.index(".SH ENVIRONMENT")]).replace("\\-", "-")
for command, rest in re.findall(r"swiftpush (\w+)((?:[^\n]*\\\\\n)*[^\n]*)", examples):
    helptext = subprocess.run([cli, command, "--help"], capture_output=True, text=True, check=True).stdout
    for flag in re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", rest):
        assert re.search(re.escape(flag) + r"\b", helptext), f"example of {command}: {flag} is not in its --help"
# EXIT STATUS names 3 (send's invalid lines) and --check-config's 2.
status = "\n".join(lines[lines.index('.SH EXIT STATUS'):])
assert "\n3\n" in status and "check" in status, status
print("sections, per-command parts and examples: ok")
PY
if command -v man >/dev/null 2>&1; then
  MANWIDTH=100 LC_ALL=C.UTF-8 man --warnings -l "$out/swiftpush.1" > "$out/rendered.txt" 2> "$out/warnings.txt"
  renderer="man -l"
elif command -v groff >/dev/null 2>&1; then
  groff -wmac -man -Tutf8 "$out/swiftpush.1" > "$out/rendered.txt" 2> "$out/warnings.txt"
  renderer="groff"
else
  echo "rendering not checked: neither man nor groff on this machine"
  exit 0
fi
if [ -s "$out/warnings.txt" ]; then echo "$renderer warned:"; cat "$out/warnings.txt"; exit 1; fi
for heading in NAME SYNOPSIS DESCRIPTION COMMANDS EXAMPLES ENVIRONMENT FILES "EXIT STATUS"; do
  grep -q "^$heading" "$out/rendered.txt" || { echo "rendered page has no $heading"; exit 1; }
done
grep -q -- "--password-file" "$out/rendered.txt" || { echo "rendered page lacks --password-file"; exit 1; }
echo "rendered by $renderer without warnings"
