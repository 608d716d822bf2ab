#!/usr/bin/env bash
# README's "Getting started", as written (issue 30, item 5): its first ```sh block (make build,
# then `swiftpush mock --quickstart out/quickstart` in the foreground) runs in the background in a
# process group of its own, and once out/quickstart/env.sh exists, its second block (the C,
# Python, Go and Swift examples against that mock) runs in a fresh shell at the top of the
# checkout. Checks: each example's line says accepted; what the mock printed is what env.sh
# exports; a restarted mock (the block's mock line again) keeps the PKI (same files) and the C
# example built against the first one still gets an answer trusted through the kept CA.
# out/quickstart is removed first, so the PKI is made from nothing. Go's caches are the test's
# own (.build-go/). The Swift example is a target of this package: `swift run SendOne` uses
# .build, where make build (and make test's build) put the Swift API.
# usage: Tests/quickstart/run.sh
# Prints one line per check and "quickstart: N passed, N failed"; exits non-zero if any failed.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
bash scripts/install-deps.sh go
work=$(mktemp -d)
mock_group=""
stop_mock() { # SIGTERM to the first block's process group (its shell and the mock), then reap
  [ -n "$mock_group" ] || return 0
  kill -TERM -- "-$mock_group" 2>/dev/null || true
  wait "$mock_group" 2>/dev/null || true
  mock_group=""
}
trap 'stop_mock; rm -rf "$work"' EXIT

pass=0; fail=0
ok() { echo "ok: $1"; pass=$((pass + 1)); }
bad() { echo "FAILED: $1"; [ -f "$work/detail" ] && sed 's/^/    /' "$work/detail"; fail=$((fail + 1)); }

python3 scripts/readme-block.py README.md "Getting started" sh 1 > "$work/start.sh"
python3 scripts/readme-block.py README.md "Getting started" sh 2 > "$work/examples.sh"
dir=$root/out/quickstart
rm -rf "$dir"

# The restart (below) is what a user does after Ctrl-C: the block's mock line again, without its
# `make build` (nothing to build; a `swift build` in a new environment still costs 10 s).
grep -v '^make ' "$work/start.sh" > "$work/restart.sh"
grep -q 'mock --quickstart' "$work/restart.sh" || { echo "FAILED: the first block has no mock --quickstart line"; exit 1; }
# start_mock LOG [SCRIPT]: runs SCRIPT (default: the first block as written); returns once env.sh
# is there (the mock writes it after it listens), or fails if the block ends first or it takes
# over 10 minutes.
start_mock() {
  rm -f "$dir/env.sh"
  setsid bash -eu "${2:-$work/start.sh}" > "$1" 2>&1 &
  mock_group=$!
  for _ in $(seq 1 6000); do
    [ -s "$dir/env.sh" ] && return 0
    kill -0 "$mock_group" 2>/dev/null || break
    sleep 0.1
  done
  tail -30 "$1"; echo "the first block did not start the mock"; return 1
}

start_mock "$work/first.log"
name="the mock printed the exports it wrote to out/quickstart/env.sh, the examples' variables"
grep '^export ' "$work/first.log" > "$work/printed" || true
grep '^export ' "$dir/env.sh" > "$work/written" || true
if diff "$work/printed" "$work/written" > "$work/detail" \
   && [ "$(grep -cE '^export APNS_(HOST|PORT|CA_FILE|KEY_FILE|KEY_ID|TEAM_ID|TOPIC)=' "$work/written")" = 7 ]
then ok "$name"; else cat "$work/first.log" >> "$work/detail"; bad "$name"; fi

name="the PKI is in out/quickstart: ca.pem, server.pem/.key, AuthKey_TESTKEY001.p8 (keys private)"
if [ -s "$dir/ca.pem" ] && [ -s "$dir/server.pem" ] && [ "$(stat -c %a "$dir/server.key")" = 600 ] \
   && [ "$(stat -c %a "$dir/AuthKey_TESTKEY001.p8")" = 600 ] && grep -q 'BEGIN PRIVATE KEY' "$dir/AuthKey_TESTKEY001.p8"
then ok "$name"; else ls -l "$dir" > "$work/detail"; bad "$name"; fi

# The second block in a shell of its own, as from another terminal at the top of the checkout.
# Only Go's caches are pointed into the checkout (.build-go/, as Bindings/run-tests.sh does):
# nothing of this machine's HOME is relied on, nothing is left there.
started=$(date +%s)
status=0
(cd "$root" && GOCACHE=$root/.build-go/cache-quickstart GOPATH=$root/.build-go/path GOPROXY=off GOFLAGS= \
  bash -eu -o pipefail "$work/examples.sh") > "$work/examples.log" 2>&1 || status=$?
echo "quickstart: the examples' block ran in $(( $(date +%s) - started )) s (exit $status)"
check() { # NAME COUNT PATTERN: COUNT lines of the examples' output match PATTERN
  if [ "$(grep -cE "$3" "$work/examples.log")" = "$2" ]; then ok "$1"; else
    { echo "exit status $status; not $2 line(s) matching $3 in:"; tail -40 "$work/examples.log"; } > "$work/detail"; bad "$1"; fi
}
check "the C example, as written, against the quickstart mock: accepted" 1 '^1 200 .*[0-9a-f-]{36}$'
# The two print the same line ("1 ACCEPTED 200", then the reason: none).
check "the Python and the Go examples, as written: ACCEPTED, each" 2 '^1 ACCEPTED 200 ?$'
check "the Swift example (SendOne), as written: accepted" 1 '^accepted 200 - [0-9a-f-]{36}$'
name="the examples' block exits 0"
if [ "$status" -eq 0 ]; then rm -f "$work/detail"; ok "$name"; else tail -40 "$work/examples.log" > "$work/detail"; bad "$name"; fi

# A restart: the same files, served again by the first block's mock line.
sums() { (cd "$dir" && sha256sum ca.pem server.pem server.key AuthKey_TESTKEY001.p8); }
sums > "$work/sums-before"
stop_mock
start_mock "$work/second.log" "$work/restart.sh"
name="a restarted mock keeps the PKI (same files) and says so"
if sums | diff "$work/sums-before" - > "$work/detail" && grep -q 'kept there' "$work/second.log"
then ok "$name"; else cat "$work/second.log" >> "$work/detail"; bad "$name"; fi
name="after a restart, the C example built before gets an answer, trusting the kept CA"
if (set +u; . "$dir/env.sh" && cd "$dir" && ./app) > "$work/detail" 2>&1 && grep -qE '^1 200 ' "$work/detail"
then ok "$name"; else bad "$name"; fi
stop_mock

echo "quickstart: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
