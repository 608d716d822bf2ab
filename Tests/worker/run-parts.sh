#!/usr/bin/env bash
# The worker's end-to-end suite (Tests/worker/run.sh) in PARTS parts at once (default 2), each
# with its own redis-server and mock on ports of its own (WORKER_PART=K/PARTS): most of its tests
# wait on answers made late, on workers killed and restarted, on drains, so parts overlap their
# waits even on two cores (issue 34, item 6: make test's time). make test runs 4: in the idle
# machine 112 s of wall time for 169 CPU-s (one part alone, all tests: about 450 s).
# Each part's output is printed whole once it ends (in order), then one line for the suite.
# usage: Tests/worker/run-parts.sh BUILD_DIR [COUNT] [PARTS]
set -uo pipefail
cd "$(dirname "$0")/../.."
build=${1:?usage: run-parts.sh BUILD_DIR [COUNT] [PARTS]}
count=${2:-100000}
parts=${3:-2}
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
pids=()
for k in $(seq 1 "$parts"); do
  WORKER_PART=$k/$parts bash Tests/worker/run.sh "$build" "$count" > "$logs/$k.log" 2>&1 &
  pids+=($!)
done
status=0 passed=0 failed=0
for k in $(seq 1 "$parts"); do
  wait "${pids[$((k - 1))]}" || status=1
  echo "--- worker part $k of $parts"
  cat "$logs/$k.log"
  summary=$(grep -E '^worker: [0-9]+ passed, [0-9]+ failed$' "$logs/$k.log" | tail -1)
  [ -n "$summary" ] || { echo "FAILED: part $k of $parts ended without its summary line"; status=1; }
  set -- $summary
  passed=$((passed + ${2:-0})) failed=$((failed + ${4:-0}))
done
echo "worker: $passed passed, $failed failed (in $parts parts)"
exit $status
