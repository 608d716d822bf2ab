#!/usr/bin/env bash
# A/B of a library change in instructions, not time: load.c (the benchmark's workload, as
# scripts/bench-ab.sh sends it) built against the OLD library with the OLD header and against the
# NEW one with the NEW header, each run under valgrind --tool=callgrind against the same mock
# server (outside valgrind), alternately, CALLGRIND_RUNS times each (default 2); prints each run's
# instructions per notification (the process's total, start-up and TLS included, over
# CALLGRIND_COUNT notifications, default 20,000) and the ratio of the medians (new / old).
# Instruction counts do not depend on what else the machine runs, so this A/B is valid on a busy
# machine where a timed one is not. Not part of make test.
# usage: scripts/callgrind-ab.sh OLD_SOURCE_DIR OLD_RELEASE_DIR NEW_RELEASE_DIR PKI_DIR
#   OLD_SOURCE_DIR: a checkout of the old commit (its Include/ and Bindings/c/examples/load.c)
#   CALLGRIND_SWIFT=1 also runs the Swift API's engine (NEW_RELEASE_DIR/swiftpushkit-bench --mode
#   engine: `swift build -c release --product swiftpushkit-bench`) on the same workload, each
#   round, and prints its median beside the new load.c's.
set -euo pipefail
cd "$(dirname "$0")/.."
old_src=$(cd "${1:?usage: callgrind-ab.sh OLD_SOURCE_DIR OLD_RELEASE_DIR NEW_RELEASE_DIR PKI_DIR}" && pwd)
old=$(cd "${2:?}" && pwd)
new=$(cd "${3:?}" && pwd)
pki=$(cd "${4:?}" && pwd)
count=${CALLGRIND_COUNT:-20000}
runs=${CALLGRIND_RUNS:-2}
command -v valgrind >/dev/null || bash scripts/install-deps.sh
source scripts/mock-ctl.sh
mock_workspace
bench_workload "$new" "$pki"          # $out/load: NEW; $token
mv "$out/load" "$out/load-new"
gcc -std=c11 -O2 -g -Wall -Wextra -Werror -I"$old_src/Include" "$old_src/Bindings/c/examples/load.c" \
  -L"$old" -lswiftpush -Wl,-rpath,"$old" -o "$out/load-old"
mock_start callgrind "$new/swiftpush-cli" "$pki"

# Instructions per notification of one run of load-SIDE under callgrind.
run() {
  local side=$1 file="$out/callgrind.$1"
  valgrind --tool=callgrind --callgrind-out-file="$file" "$out/load-$side" --host localhost --port "$MOCK_PORT" \
    --ca "$pki/ca.pem" --key "$pki/AuthKey_TESTKEY001.p8" --key-id TESTKEY001 --team-id TEAM123456 \
    --topic com.example.app --count "$count" --window 10000 --token "$token" --quiet > "$out/run.log" 2>&1 \
    || { cat "$out/run.log"; echo "callgrind-ab: load-$side failed" >&2; exit 1; }
  grep -q "accepted=$count" "$out/run.log" || { cat "$out/run.log"; echo "callgrind-ab: not every notification was accepted" >&2; exit 1; }
  awk -v n="$count" '/^(summary|totals):/ { print int($2 / n); exit }' "$file"
}
# The same for the Swift API's engine (swiftpushkit-bench --mode engine, load.c's loop in Swift).
run_swift() {
  local file="$out/callgrind.swift"
  valgrind --tool=callgrind --callgrind-out-file="$file" "$new/swiftpushkit-bench" --mode engine --host localhost \
    --port "$MOCK_PORT" --ca "$pki/ca.pem" --key "$pki/AuthKey_TESTKEY001.p8" --key-id TESTKEY001 --team-id TEAM123456 \
    --topic com.example.app --count "$count" --window 10000 --token "$token" > "$out/run.log" 2>&1 \
    || { cat "$out/run.log"; echo "callgrind-ab: swiftpushkit-bench failed" >&2; exit 1; }
  grep -q "accepted=$count" "$out/run.log" || { cat "$out/run.log"; echo "callgrind-ab: not every notification was accepted" >&2; exit 1; }
  awk -v n="$count" '/^(summary|totals):/ { print int($2 / n); exit }' "$file"
}
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

echo "workload: $count notifications, 200-byte payload, 1 connection x 1000 streams; $runs callgrind runs each, alternating"
: > "$out/old"; : > "$out/new"; : > "$out/swift"
for i in $(seq 1 "$runs"); do
  for side in old new; do
    r=$(run "$side")
    echo "$r" >> "$out/$side"
    printf '  run %d %s: %s instructions per notification\n' "$i" "$side" "$r"
  done
  if [ "${CALLGRIND_SWIFT:-0}" = 1 ]; then
    r=$(run_swift)
    echo "$r" >> "$out/swift"
    printf '  run %d Swift engine (new): %s instructions per notification\n' "$i" "$r"
  fi
done
old_med=$(median < "$out/old"); new_med=$(median < "$out/new")
awk -v a="$new_med" -v b="$old_med" 'BEGIN { printf "medians: old %s, new %s instructions per notification; new/old %.4f\n", b, a, a / b }'
if [ "${CALLGRIND_SWIFT:-0}" = 1 ]; then
  swift_med=$(median < "$out/swift")
  awk -v a="$swift_med" -v b="$new_med" 'BEGIN { printf "Swift engine: median %s instructions per notification; Swift/new load.c %.4f\n", a, a / b }'
fi
