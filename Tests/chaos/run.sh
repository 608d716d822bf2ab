#!/usr/bin/env bash
# The long chaos run (issue #8): COUNT notifications (default 1,000,000) through one client
# against the in-process mock with changing faults and server restarts, reconciled with the
# mock's record (Tests/PushTransportTests/ChaosTests.swift). Release mode, its own scratch path.
#   Tests/chaos/run.sh [COUNT] [SEED]
# Bounded: every notification has a 1.5 s deadline and every phase must progress within 20 s;
# the whole run is also killed after CHAOS_TIMEOUT seconds (default 1800).
# Prints the test's summary lines (chaos-result, chaos-client, chaos-server).
set -euo pipefail
cd "$(dirname "$0")/../.."
count=${1:-1000000}
export SWIFTPUSH_CHAOS_COUNT=$count
[ -n "${2:-}" ] && export SWIFTPUSH_CHAOS_SEED=$2
scratch=${CHAOS_SCRATCH:-.build-chaos}
flags=(-c release -Xswiftc -enable-testing --scratch-path "$scratch")
swift build "${flags[@]}" --build-tests
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
SWIFT_BACKTRACE=enable=no timeout "${CHAOS_TIMEOUT:-1800}" \
  swift test "${flags[@]}" --skip-build --filter ChaosTests > "$log" 2>&1 || status=$?
grep -E '^chaos-|✘|Test run with' "$log" || true
if [ "$status" -ne 0 ]; then
  tail -n 40 "$log" >&2
  echo "FAILED: chaos run of $count notifications (exit $status)" >&2
  exit 1
fi
echo "ok: chaos run of $count notifications"
