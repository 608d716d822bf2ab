#!/usr/bin/env bash
# The benchmark: the same workload through libswiftpush.so (C) and through h2load, against the
# same mock APNs server, side by side in one run, repeated; medians are reported. The Swift API
# (SwiftPushKit, swiftpushkit-bench in RELEASE_DIR) runs it too, in the same runs: its engine
# (batches submitted and results taken on one thread, as load.c does) with its ratio to load.c,
# the async batch path (APNsClient.send(contentsOf:)) and 1,000 tasks each awaiting one send at
# a time, on the cooperative pool and on the client's task executor (APNsClient.taskExecutor).
# Workload: TLS 1.3, token auth, one device token, 200-byte alert payload, 1 connection x 1000
# concurrent streams, BENCH_COUNT notifications (default 200000), BENCH_RUNS runs (default 3).
# The server runs on CPU 0 and each client on CPU 1 where the machine has two cores.
# Last line (machine-readable):
#   swiftpush-bench rate=<n> h2load_rate=<n> ratio=<r> cpu_us_per_notification=<x> peak_rss_mb=<m>
#     swift_rate=<n> swift_ratio=<swift / C> swift_cpu_us_per_notification=<x> swift_batch_rate=<n>
#     swift_tasks_rate=<n> swift_tasks_executor_rate=<n>
# A/B: BENCH_BASELINE=DIR (the release directory of another build, e.g. the commit before a
# change) runs that libswiftpush.so through the same workload in the same runs, interleaved, and
# prints its medians beside the new one's (a hot-path change is measured this way, in one run).
# BENCH_BASELINE_SRC=CHECKOUT builds the baseline's load.c from that checkout (its own header:
# needed when the records changed between the two builds). When the baseline directory holds a
# swiftpushkit-bench too, its Swift rows run in the same runs as well, and are printed beside the
# new ones (a change to the Swift API is measured this way).
# usage: scripts/bench.sh RELEASE_DIR PKI_DIR
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(cd "${1:?usage: bench.sh RELEASE_DIR PKI_DIR}" && pwd)
pki=$(cd "${2:?}" && pwd)
count=${BENCH_COUNT:-200000}
runs=${BENCH_RUNS:-3}
source scripts/mock-ctl.sh
mock_workspace

bench_cpus
# BENCH_FIFO=1: the server and the clients in SCHED_FIFO (chrt -f 10; root), so that other work on a
# shared machine does not delay their wake-ups: on the loaded machine the Swift engine then made
# 106,000-141,000/s against 123,516/s on the idle one. The other work waits for the bench meanwhile.
if [ "${BENCH_FIFO:-}" = 1 ]; then server_cpu="chrt -f 10 $server_cpu"; client_cpu="chrt -f 10 $client_cpu"; fi

bench_workload "$build" "$pki"
baseline=""
if [ -n "${BENCH_BASELINE:-}" ]; then
  baseline=$(cd "$BENCH_BASELINE" && pwd)
  if [ -n "${BENCH_BASELINE_SRC:-}" ]; then
    # A baseline from before a change to the header's records: its load.c and header, from its
    # own checkout, so that each build reads the records it was compiled for.
    (cd "$BENCH_BASELINE_SRC" && build_load "$baseline" "$out/load-baseline")
  else
    build_load "$baseline" "$out/load-baseline"
  fi
fi

# The server, pinned to its core. --lenient-initial-limit: h2load may open streams before it
# has read the first SETTINGS (limit 1), which a strict mock answers with GOAWAY as APNs would.
# swiftpush waits for the raise either way.
MOCK_RUNNER=$server_cpu mock_start bench "$build/swiftpush-cli" "$pki" --lenient-initial-limit
port=$MOCK_PORT

run_h2load() {
  $client_cpu h2load -n "$count" -c 1 -m 1000 -t 1 \
    -H 'apns-topic: com.example.app' -H 'apns-push-type: alert' -H 'apns-priority: 10' \
    -H "authorization: bearer $jwt" -d "$out/payload.json" \
    "https://127.0.0.1:$port/3/device/$token" > "$out/h2load.txt" 2>&1
  local rate ok
  rate=$(grep -oE 'finished in [0-9.]+m?s, [0-9.]+ req/s' "$out/h2load.txt" | grep -oE '[0-9.]+ req/s' | grep -oE '[0-9.]+')
  ok=$(grep -oE 'status codes: [0-9]+ 2xx' "$out/h2load.txt" | grep -oE '[0-9]+ 2xx' | grep -oE '^[0-9]+')
  [ "$ok" = "$count" ] || { cat "$out/h2load.txt" >&2; echo "h2load: only $ok of $count answered 2xx" >&2; }
  echo "$rate"
}
run_library() {
  $client_cpu "${1:-$out/load}" --host localhost --port "$port" --ca "$pki/ca.pem" --key "$pki/AuthKey_TESTKEY001.p8" \
    --key-id TESTKEY001 --team-id TEAM123456 --topic com.example.app --count "$count" --window 10000 \
    --token "$token" --quiet > "$out/load.txt" 2>&1 || { cat "$out/load.txt" >&2; }
  grep '^load-result' "$out/load.txt"
}
run_swift() {
  $client_cpu "${2:-$build}/swiftpushkit-bench" --mode "$1" --host localhost --port "$port" --ca "$pki/ca.pem" \
    --key "$pki/AuthKey_TESTKEY001.p8" --key-id TESTKEY001 --team-id TEAM123456 --topic com.example.app \
    --count "$count" --window 10000 --token "$token" > "$out/swift.txt" 2>&1 || { cat "$out/swift.txt" >&2; }
  grep '^load-result' "$out/swift.txt"
}
field() { sed -E "s/.* $1=([^ ]+).*/\1/"; }
# The mock's CPU time so far, in clock ticks: what a run cost the server, per request, shows
# whether the server (on its own core) is what limits a client.
server_ticks() { awk '{print $14 + $15}' "/proc/$MOCK_PID/stat"; }
server_us() { awk -v t0="$1" -v t1="$2" -v n="$count" -v hz="$(getconf CLK_TCK)" 'BEGIN {printf "%.2f\n", (t1 - t0) * 1e6 / hz / n}'; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

echo "workload: $count notifications, 200-byte payload, 1 connection x 1000 streams, TLS 1.3, token auth"
echo "server on ${server_cpu:-any CPU}, clients on ${client_cpu:-any CPU}; $runs runs each, interleaved"
# Warm-up (page cache, CPU frequency, the server's allocator).
count=20000 run_library >/dev/null
[ -z "$baseline" ] || count=20000 run_library "$out/load-baseline" >/dev/null
count=20000 run_swift engine >/dev/null
: > "$out/lib"; : > "$out/h2"; : > "$out/server-lib"; : > "$out/server-h2"; : > "$out/base"
: > "$out/swift-engine"; : > "$out/swift-batch"; : > "$out/swift-tasks"; : > "$out/swift-tasks-executor"
swift_baseline=""
[ -z "$baseline" ] || [ ! -x "$baseline/swiftpushkit-bench" ] || swift_baseline=$baseline
for mode in engine batch tasks; do : > "$out/base-swift-$mode"; done
for i in $(seq 1 "$runs"); do
  t0=$(server_ticks); h=$(run_h2load); echo "$h" >> "$out/h2"
  t1=$(server_ticks); l=$(run_library); echo "$l" >> "$out/lib"
  t2=$(server_ticks)
  server_us "$t0" "$t1" >> "$out/server-h2"; server_us "$t1" "$t2" >> "$out/server-lib"
  printf '  run %d: h2load %8.0f req/s | swiftpush %8.0f notifications/s, %5.2f CPU-us/notification, %5.1f MB RSS, %s accepted | server CPU-us/request: h2load %s, swiftpush %s\n' \
    "$i" "$h" "$(echo "$l" | field rate)" "$(echo "$l" | field cpu_us_per_notification)" \
    "$(echo "$l" | field peak_rss_mb)" "$(echo "$l" | field accepted)" "$(tail -1 "$out/server-h2")" "$(tail -1 "$out/server-lib")"
  for mode in engine batch tasks tasks-executor; do run_swift "$mode" >> "$out/swift-$mode"; done
  printf '  run %d: Swift engine %8.0f notifications/s (%5.2f CPU-us) | async batch %8.0f | 1,000 tasks %8.0f | on the client executor %8.0f | accepted %s %s %s %s\n' "$i" \
    "$(tail -1 "$out/swift-engine" | field rate)" "$(tail -1 "$out/swift-engine" | field cpu_us_per_notification)" \
    "$(tail -1 "$out/swift-batch" | field rate)" "$(tail -1 "$out/swift-tasks" | field rate)" "$(tail -1 "$out/swift-tasks-executor" | field rate)" \
    "$(tail -1 "$out/swift-engine" | field accepted)" "$(tail -1 "$out/swift-batch" | field accepted)" "$(tail -1 "$out/swift-tasks" | field accepted)" \
    "$(tail -1 "$out/swift-tasks-executor" | field accepted)"
  if [ -n "$baseline" ]; then
    b=$(run_library "$out/load-baseline"); echo "$b" >> "$out/base"
    printf '  run %d: baseline %8.0f notifications/s, %5.2f CPU-us/notification, %5.1f MB RSS, %s accepted\n' \
      "$i" "$(echo "$b" | field rate)" "$(echo "$b" | field cpu_us_per_notification)" "$(echo "$b" | field peak_rss_mb)" "$(echo "$b" | field accepted)"
  fi
  if [ -n "$swift_baseline" ]; then
    for mode in engine batch tasks; do run_swift "$mode" "$swift_baseline" >> "$out/base-swift-$mode"; done
    printf '  run %d: baseline Swift engine %8.0f | async batch %8.0f | 1,000 tasks %8.0f\n' "$i" \
      "$(tail -1 "$out/base-swift-engine" | field rate)" "$(tail -1 "$out/base-swift-batch" | field rate)" "$(tail -1 "$out/base-swift-tasks" | field rate)"
  fi
done
h2=$(median < "$out/h2")
rate=$(field rate < "$out/lib" | median)
cpu=$(field cpu_us_per_notification < "$out/lib" | median)
rss=$(field peak_rss_mb < "$out/lib" | median)
ratio=$(awk -v a="$rate" -v b="$h2" 'BEGIN {printf "%.3f", (b > 0) ? a / b : 0}')
echo "medians: swiftpush $rate notifications/s, h2load $h2 req/s, ratio $ratio, $cpu CPU-us/notification, $rss MB peak RSS"
echo "server CPU-us per request (medians): h2load $(median < "$out/server-h2"), swiftpush $(median < "$out/server-lib")" \
  "(unique :path and apns-id per notification, vs h2load's one indexed request)"
if [ -n "$baseline" ]; then
  brate=$(field rate < "$out/base" | median)
  bcpu=$(field cpu_us_per_notification < "$out/base" | median)
  brss=$(field peak_rss_mb < "$out/base" | median)
  echo "A/B medians: new $rate notifications/s, $cpu CPU-us/notification, $rss MB | baseline ($baseline) $brate notifications/s," \
    "$bcpu CPU-us/notification, $brss MB | rate new/baseline $(awk -v a="$rate" -v b="$brate" 'BEGIN {printf "%.3f", (b > 0) ? a / b : 0}')"
fi
swift=$(field rate < "$out/swift-engine" | median)
swift_cpu=$(field cpu_us_per_notification < "$out/swift-engine" | median)
swift_batch=$(field rate < "$out/swift-batch" | median)
swift_tasks=$(field rate < "$out/swift-tasks" | median)
swift_tasks_executor=$(field rate < "$out/swift-tasks-executor" | median)
swift_ratio=$(awk -v a="$swift" -v b="$rate" 'BEGIN {printf "%.3f", (b > 0) ? a / b : 0}')
of_engine() { awk -v a="$1" -v b="$swift" 'BEGIN {printf "%.3f", (b > 0) ? a / b : 0}'; }
echo "Swift API medians: engine $swift notifications/s ($swift_ratio x C, $swift_cpu CPU-us/notification)," \
  "async batch $swift_batch ($(of_engine "$swift_batch") x engine), 1,000 tasks one at a time $swift_tasks ($(of_engine "$swift_tasks") x engine)," \
  "the same on the client's task executor $swift_tasks_executor ($(of_engine "$swift_tasks_executor") x engine)"
if [ -n "$swift_baseline" ]; then
  line="Swift A/B medians, new / baseline:"
  for mode in engine batch tasks; do
    n=$(field rate < "$out/swift-$mode" | median); b=$(field rate < "$out/base-swift-$mode" | median)
    line+=" $mode $n / $b ($(awk -v a="$n" -v b="$b" 'BEGIN {printf "%.3f", (b > 0) ? a / b : 0}'))"
  done
  echo "$line"
fi
echo "swiftpush-bench rate=$rate h2load_rate=$h2 ratio=$ratio cpu_us_per_notification=$cpu peak_rss_mb=$rss" \
  "swift_rate=$swift swift_ratio=$swift_ratio swift_cpu_us_per_notification=$swift_cpu swift_batch_rate=$swift_batch swift_tasks_rate=$swift_tasks" \
  "swift_tasks_executor_rate=$swift_tasks_executor"
