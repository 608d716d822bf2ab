#!/usr/bin/env bash
# A/B of a library change on the benchmark's workload (scripts/bench.sh, bench_workload): load.c
# built against the OLD library with the OLD header, and against the NEW one with the NEW header,
# run alternately against the same mock server, BENCH_RUNS runs each (default 5); prints every
# run, the medians and their ratio (new / old). For hot-path changes (docs: "A hot-path change
# comes with an A/B in one run"). Not part of make test: a timing is never a test assertion.
# usage: scripts/bench-ab.sh OLD_SOURCE_DIR OLD_RELEASE_DIR NEW_RELEASE_DIR PKI_DIR
#   OLD_SOURCE_DIR: a checkout of the old commit (its Include/ and Bindings/c/examples/load.c)
set -euo pipefail
cd "$(dirname "$0")/.."
old_src=$(cd "${1:?usage: bench-ab.sh OLD_SOURCE_DIR OLD_RELEASE_DIR NEW_RELEASE_DIR PKI_DIR}" && pwd)
old=$(cd "${2:?}" && pwd)
new=$(cd "${3:?}" && pwd)
pki=$(cd "${4:?}" && pwd)
count=${BENCH_COUNT:-200000}
runs=${BENCH_RUNS:-5}
source scripts/mock-ctl.sh
mock_workspace
bench_cpus
bench_workload "$new" "$pki"          # $out/load: NEW; $token
mv "$out/load" "$out/load-new"
gcc -std=c11 -O2 -g -Wall -Wextra -Werror -I"$old_src/Include" "$old_src/Bindings/c/examples/load.c" \
  -L"$old" -lswiftpush -Wl,-rpath,"$old" -o "$out/load-old"

MOCK_RUNNER=$server_cpu mock_start ab "$new/swiftpush-cli" "$pki"
run() {
  $client_cpu "$out/load-$1" --host localhost --port "$MOCK_PORT" --ca "$pki/ca.pem" --key "$pki/AuthKey_TESTKEY001.p8" \
    --key-id TESTKEY001 --team-id TEAM123456 --topic com.example.app --count "$count" --window 10000 \
    --token "$token" --quiet 2>&1 | grep '^load-result'
}
field() { sed -E "s/.* $1=([^ ]+).*/\1/"; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

echo "workload: $count notifications, 200-byte payload, 1 connection x 1000 streams; $runs runs each, alternating"
count=20000 run old > /dev/null; count=20000 run new > /dev/null   # warm-up
: > "$out/old"; : > "$out/new"
for i in $(seq 1 "$runs"); do
  for side in old new; do
    r=$(run "$side")
    echo "$r" >> "$out/$side"
    printf '  run %d %s: %8.0f notifications/s, %5.2f CPU-us/notification, %s accepted\n' "$i" "$side" \
      "$(echo "$r" | field rate)" "$(echo "$r" | field cpu_us_per_notification)" "$(echo "$r" | field accepted)"
  done
done
for side in old new; do
  eval "${side}_rate=\$(field rate < \"\$out/\$side\" | median)"
  eval "${side}_cpu=\$(field cpu_us_per_notification < \"\$out/\$side\" | median)"
done
echo "medians: old $old_rate notifications/s ($old_cpu CPU-us), new $new_rate notifications/s ($new_cpu CPU-us)"
awk -v a="$new_rate" -v b="$old_rate" -v c="$new_cpu" -v d="$old_cpu" \
  'BEGIN {printf "bench-ab rate_ratio=%.3f cpu_ratio=%.3f (new / old)\n", a / b, c / d}'
