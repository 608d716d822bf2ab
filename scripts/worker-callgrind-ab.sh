#!/usr/bin/env bash
# A/B of a worker change in instructions, not time (issue 34: "callgrind A/B ... of the worker's
# multicast row in one run"): the multicast row of scripts/bench-worker.sh (one worker, entries of
# CALLGRIND_TOKENS tokens, 500 by default, CALLGRIND_COUNT notifications, 50,000 by default)
# drained by the OLD command's worker and by the NEW one's, each under valgrind --tool=callgrind
# (bench-worker.sh's WORKER_RUNNER), alternately, CALLGRIND_RUNS times each (default 2), against
# the same kind of mock and Redis (outside valgrind). Prints each run's instructions per
# notification (the worker process's total over the drain, start-up, TLS and the stop included)
# and the ratio of the medians (new / old). Instruction counts do not depend on what else the
# machine runs, so this A/B is valid on a busy machine where a timed one is not. Not part of make test.
# usage: scripts/worker-callgrind-ab.sh OLD_COMMAND NEW_COMMAND PKI_DIR
#   OLD_COMMAND / NEW_COMMAND: release builds' `swiftpush` (the worker is `swiftpush worker`)
set -euo pipefail
cd "$(dirname "$0")/.."
old=$(realpath "${1:?usage: worker-callgrind-ab.sh OLD_COMMAND NEW_COMMAND PKI_DIR}")
new=$(realpath "${2:?}")
pki=${3:?}
count=${CALLGRIND_COUNT:-50000}
tokens=${CALLGRIND_TOKENS:-500}
runs=${CALLGRIND_RUNS:-2}
command -v valgrind >/dev/null || bash scripts/install-deps.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Copies without debug sections: Debian's valgrind 3.19 gives up on the release command's (the
# C dependencies' clang DWARF 5); instructions are counted the same without them.
for v in old new; do
  mkdir -p "$work/$v-bin"
  objcopy --strip-debug "${!v}" "$work/$v-bin/swiftpush"
  ln -s "$(dirname "${!v}")/swiftpush-cli" "$work/$v-bin/swiftpush-cli"
  for f in "$(dirname "${!v}")"/libswiftpush.so*; do ln -s "$f" "$work/$v-bin/"; done
  printf -v "$v" '%s' "$work/$v-bin/swiftpush"
done

# run VARIANT COMMAND ROUND: one drain under callgrind; appends "VARIANT instructions" to $work/ir.
run() {
  local dir=$work/$1-$3
  mkdir -p "$dir"
  # bench-worker.sh builds load.c against the release directory it is given (the command's).
  WORKER_RUNNER="valgrind --tool=callgrind --callgrind-out-file=$dir/callgrind.%p" \
    BENCH_COUNT=$count BENCH_TOKENS=$tokens BENCH_LATENCY_RATES="" BENCH_WORKERS=1 BENCH_RUNS=1 \
    BENCH_AB="$1=$2" bash scripts/bench-worker.sh "$(dirname "$2")" "$pki" > "$dir/bench.log" 2>&1 \
    || { cat "$dir/bench.log"; echo "worker-callgrind-ab: the $1 drain failed"; exit 1; }
  local ir
  ir=$(cat "$dir"/callgrind.* | sed -n 's/^totals: *\([0-9]*\).*/\1/p; s/^summary: *\([0-9]*\).*/\1/p' | head -1)
  [ -n "$ir" ] || { echo "worker-callgrind-ab: no callgrind totals for $1"; exit 1; }
  echo "$1 $ir" >> "$work/ir"
  python3 -c "import sys; print(f'{sys.argv[1]} round {sys.argv[2]}: {int(sys.argv[3]) / int(sys.argv[4]):,.1f} instructions per notification')" "$1" "$3" "$ir" "$count"
}

for round in $(seq 1 "$runs"); do
  run old "$old" "$round"
  run new "$new" "$round"
done
python3 - "$work/ir" "$count" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
n = int(sys.argv[2])
med = {v: statistics.median(int(ir) / n for name, ir in rows if name == v) for v in ("old", "new")}
print(f"worker-callgrind-ab count={n} old={med['old']:.1f} new={med['new']:.1f} ratio={med['new'] / med['old']:.4f}")
PY
