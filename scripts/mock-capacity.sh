#!/usr/bin/env bash
# The mock's capacity with and without its delay mode (issue 17: the mock must not be the ceiling
# of the latency benchmark; its delay mode is to sustain at least 80% of its no-delay rate).
# The mock is single-threaded, so its sustained rate, when it is the bottleneck, is the inverse of
# its CPU time per answer: that is what is measured. h2load (8 connections x 1000 streams) sends
# CAP_COUNT requests (default 200000) to a mock without delay and to one with every answer
# CAP_DELAY ms late (default 20), interleaved, CAP_RUNS times (default 5); the mock's CPU time
# per answer (all its threads, from /proc/PID/task/*/schedstat, nanoseconds) is taken over each
# run after a warm-up of 20,000 requests; medians. The server runs on CPU 0 and h2load on CPU 1
# where the machine has two cores.
# With several CLIs (e.g. an old and a new build), each is measured in the same interleaved runs,
# so their figures can be read side by side (an A/B in one run).
# Last line per CLI (machine-readable; ratio is of the medians, run_ratio the median of each
# run's own ratio, which a machine whose load changes between runs disturbs less):
#   swiftpush-mock-capacity delay_ms=D no_delay_us=X delay_us=Y ratio=X/Y run_ratio=R [cli=PATH]
# usage: scripts/mock-capacity.sh RELEASE_DIR PKI_DIR [CLI...]   (default CLI: RELEASE_DIR/swiftpush-cli)
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(cd "${1:?usage: mock-capacity.sh RELEASE_DIR PKI_DIR [CLI...]}" && pwd)
pki=$(cd "${2:?}" && pwd)
shift 2
clis=("$@")
[ ${#clis[@]} -gt 0 ] || clis=("$build/swiftpush-cli")
runs=${CAP_RUNS:-5}
n=${CAP_COUNT:-200000}
delay=${CAP_DELAY:-20}
[ "$delay" -gt 0 ] 2>/dev/null || { echo "mock-capacity: CAP_DELAY must be a number of milliseconds above 0 (got '$delay')" >&2; exit 2; }
source scripts/mock-ctl.sh
mock_workspace
bench_cpus
bench_workload "$build" "$pki"

h2() { # REQUESTS
  $client_cpu h2load -n "$1" -c 8 -m 1000 -t 1 -H 'apns-topic: com.example.app' -H 'apns-push-type: alert' \
    -H 'apns-priority: 10' -H "authorization: bearer $jwt" -d "$out/payload.json" \
    "https://127.0.0.1:$MOCK_PORT/3/device/$token" > "$out/h2load.txt" 2>&1 || true
  local ok
  ok=$(grep -oE 'status codes: [0-9]+ 2xx' "$out/h2load.txt" | grep -oE '[0-9]+ 2xx' | grep -oE '^[0-9]+' || echo 0)
  # h2load opens up to 100 streams before it reads the mock's SETTINGS, and a token connection
  # starts at one stream (as APNs's do): up to 99 per connection may be refused (REFUSED_STREAM),
  # which h2load counts as errors and does not retry. Anything beyond that is a failure.
  [ $((ok + 8 * 99)) -ge "$1" ] || { grep -E "^(requests|status codes)" "$out/h2load.txt" >&2; echo "mock-capacity: only $ok of $1 answered 2xx" >&2; return 1; }
}
# The mock's CPU time so far, in nanoseconds (every thread's; a thread that ends between the
# glob and the read is skipped rather than failing the script under pipefail).
mock_ns() { { cat /proc/"$MOCK_PID"/task/*/schedstat 2>/dev/null || true; } | awk '{s += $1} END {print s}'; }
median() { sort -g | awk '{a[NR]=$1} END {if (NR == 0) print 0; else print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

echo "mock capacity: h2load 8 connections x 1000 streams, $n requests per run, $runs runs, delay 0 and $delay ms,"
echo "  interleaved; mock on ${server_cpu:-any CPU}, h2load on ${client_cpu:-any CPU}; mock CPU-us per answer"
for r in $(seq 1 "$runs"); do
  for i in "${!clis[@]}"; do
    for d in 0 "$delay"; do
      mock_stop_all
      extra=()
      [ "$d" != 0 ] && extra=(--delay-ms "$d")
      MOCK_RUNNER=$server_cpu mock_start "capacity-$i-$d" "${clis[$i]}" "$pki" --lenient-initial-limit "${extra[@]}"
      h2 20000
      # The mock is warm (allocator, page cache, CPU frequency): measure.
      t0=$(mock_ns)
      h2 "$n"
      t1=$(mock_ns)
      us=$(awk -v a="$t0" -v b="$t1" -v n="$n" 'BEGIN {printf "%.3f", (b - a) / 1000 / n}')
      echo "$us" >> "$out/cap-$i-$d"
      [ "$d" = 0 ] && base_us=$us || awk -v a="$base_us" -v b="$us" 'BEGIN {printf "%.4f\n", a / b}' >> "$out/ratio-$i"
      rate=$(grep -oE '[0-9.]+ req/s' "$out/h2load.txt" | head -1 || true)
      echo "  run $r cli $i delay $d ms: $us CPU-us/answer (h2load ${rate:-?})"
    done
  done
done
mock_stop_all
for i in "${!clis[@]}"; do
  base=$(median < "$out/cap-$i-0")
  late=$(median < "$out/cap-$i-$delay")
  label=""
  [ ${#clis[@]} -gt 1 ] && label=" cli=${clis[$i]}"
  echo "swiftpush-mock-capacity delay_ms=$delay no_delay_us=$base delay_us=$late" \
    "ratio=$(awk -v a="$base" -v b="$late" 'BEGIN {printf "%.3f", (b > 0) ? a / b : 0}')" \
    "run_ratio=$(median < "$out/ratio-$i" | awk '{printf "%.3f", $1}')$label"
done
