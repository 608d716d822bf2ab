#!/usr/bin/env bash
# Runs one shell suite of make test (issue 36) through scripts/bounded-run.py: in a process
# group of its own, bounded (SUITE_BOUND seconds, default 2700: then every process of the
# suite is killed and the step fails with exit 124, naming what was still running), and failed
# when the suite leaves a process running 10 s after it ended (listed and killed). Only the
# suite's own processes are looked at: this script is their child subreaper.
#   scripts/in-own-group.sh COMMAND [ARGS...]     e.g. scripts/in-own-group.sh bash Tests/redis/run.sh .build/debug
set -euo pipefail
[ $# -gt 0 ] || { echo "usage: in-own-group.sh COMMAND [ARGS...]" >&2; exit 2; }
exec python3 "$(dirname "$0")/bounded-run.py" --bound "${SUITE_BOUND:-2700}" --bound-name SUITE_BOUND --label "$*" -- "$@"
