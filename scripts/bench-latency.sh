#!/usr/bin/env bash
# The library and h2load against the mock with every answer delayed (APNs is 20-100 ms away and
# its answers arrive spread out, one per TLS record): issue 17's latency benchmark.
# For each delay (LAT_DELAYS, default "20 50 100" ms) one mock server; for each connection count
# (LAT_CONNECTIONS, default "1 4 8"; 1000 streams each) LAT_RUNS runs (default 3) of
# LAT_COUNT notifications (default 100000, raised to LAT_MIN_RTTS (default 25) x connections x
# 1000 so that every run keeps the streams full for that many round trips: a shorter run measures
# mostly the start, where each connection waits one round trip for its stream limit to be raised)
# through load.c and through h2load, interleaved, medians:
#   rate, whole-process CPU per notification (user+sys of the client process, as /usr/bin/time
#   counts it: both of the library's threads, TLS handshake and start-up included), peak RSS,
#   and the mock's own CPU per answer and share of its core (to show it is not the ceiling);
#   then a separate pass of LAT_SYSCALL_COUNT notifications (default 20000; 0 skips it) counting
#   the client's system calls (perf stat tracepoints where allowed, strace -c -f otherwise;
#   LAT_SYSCALL_TOOL=perf|strace|none chooses).
# LAT_MOCK_CLI: another swiftpush-cli to run the mock from (to compare mock versions).
# First, the mock's own capacity (scripts/mock-capacity.sh: its CPU per answer under h2load with
# no delay and with LAT_CAPACITY_DELAY ms, default 20; CAP_RUNS runs, default 5, of CAP_COUNT
# requests, default 200000), so the tables can be read knowing whether the mock could be their
# ceiling; LAT_MOCK_CAPACITY=0 skips it. Its last line (machine-readable):
#   swiftpush-mock-capacity delay_ms=D no_delay_us=X delay_us=Y ratio=X/Y run_ratio=R
# Per delay, one more row: the library with a self-sizing pool (PUSH_OPT_MIN_CONNECTIONS 1) that
# may grow to LAT_AUTO_MAX connections (default the largest of LAT_CONNECTIONS; 1 skips it),
# to be read against the fixed pools' rates.
# h2load's rate counts from its start (connecting included), load.c's from its first send.
# The server runs on CPU 0 and each client on CPU 1 where the machine has two cores. Little's law
# bounds every row: rate <= connections x 1000 / delay.
# Last line per configuration (machine-readable):
#   swiftpush-latency-bench delay_ms=D connections=C rate=R h2load_rate=H cpu_us=X h2load_cpu_us=Y
# usage: scripts/bench-latency.sh RELEASE_DIR PKI_DIR
#   quick: LAT_DELAYS=50 LAT_CONNECTIONS="1 4" LAT_RUNS=1 LAT_COUNT=20000 scripts/bench-latency.sh ...
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(cd "${1:?usage: bench-latency.sh RELEASE_DIR PKI_DIR}" && pwd)
pki=$(cd "${2:?}" && pwd)
delays=${LAT_DELAYS:-20 50 100}
conn_list=${LAT_CONNECTIONS:-1 4 8}
runs=${LAT_RUNS:-3}
count=${LAT_COUNT:-100000}
sys_count=${LAT_SYSCALL_COUNT:-20000}
min_rtts=${LAT_MIN_RTTS:-25}
streams=1000
source scripts/mock-ctl.sh
mock_workspace
bench_cpus
[ -x /usr/bin/time ] || bash scripts/install-deps.sh time

bench_workload "$build" "$pki"

# How system calls are counted: perf's tracepoints (cheap, every thread) when the kernel lets
# us, strace -c -f otherwise.
syscall_tool=${LAT_SYSCALL_TOOL:-}
if [ -n "$syscall_tool" ]; then
  :
elif [ "$sys_count" -le 0 ]; then
  syscall_tool=none
else
  syscall_tool=none
  if command -v perf >/dev/null && perf stat -x, -e raw_syscalls:sys_enter -- true >/dev/null 2>&1; then
    syscall_tool=perf
  elif command -v strace >/dev/null; then
    syscall_tool=strace
  else
    echo "bench-latency: neither perf (tracepoints) nor strace: no system call counts" >&2
  fi
fi

load_cmd() { # COUNT CONNECTIONS [MIN_CONNECTIONS]
  # 10 notifications queued per stream, as in scripts/bench.sh: the streams never wait for the sender.
  echo "$out/load" --host localhost --port "$port" --ca "$pki/ca.pem" --key "$pki/AuthKey_TESTKEY001.p8" \
    --key-id TESTKEY001 --team-id TEAM123456 --topic com.example.app --token "$token" --quiet \
    --count "$1" --connections "$2" --window $(($2 * streams * 10)) --min-connections "${3:-0}"
}
# Runs a client under /usr/bin/time; prints "rate cpu_us rss_mb".
timed() { # WHICH COUNT CONNECTIONS (WHICH: h2load, swiftpush, or swiftpush-auto: a self-sizing pool from 1)
  local which=$1 n=$2 c=$3 rate auto_min=0
  [ "$which" = swiftpush-auto ] && auto_min=1
  if [ "$which" = h2load ]; then
    /usr/bin/time -f '%U %S %M' -o "$out/time.txt" $client_cpu h2load -n "$n" -c "$c" -m "$streams" -t 1 \
      -H 'apns-topic: com.example.app' -H 'apns-push-type: alert' -H 'apns-priority: 10' \
      -H "authorization: bearer $jwt" -d "$out/payload.json" "https://127.0.0.1:$port/3/device/$token" \
      > "$out/client.txt" 2>&1 || true
    rate=$(grep -oE 'finished in [0-9.]+m?s, [0-9.]+ req/s' "$out/client.txt" | grep -oE '[0-9.]+ req/s' | grep -oE '[0-9.]+' || echo 0)
    local ok
    ok=$(grep -oE 'status codes: [0-9]+ 2xx' "$out/client.txt" | grep -oE '[0-9]+ 2xx' | grep -oE '^[0-9]+' || echo 0)
    [ "$ok" = "$n" ] || { tail -5 "$out/client.txt" >&2; echo "h2load: only $ok of $n answered 2xx" >&2; }
  else
    # shellcheck disable=SC2046 # load_cmd's words contain no spaces
    /usr/bin/time -f '%U %S %M' -o "$out/time.txt" $client_cpu $(load_cmd "$n" "$c" "$auto_min") > "$out/client.txt" 2>&1 || true
    rate=$(grep '^load-result' "$out/client.txt" | sed -E 's/.* rate=([^ ]+).*/\1/' || true)
    local accepted
    accepted=$(grep '^load-result' "$out/client.txt" | sed -E 's/.* accepted=([^ ]+).*/\1/' || true)
    [ "$accepted" = "$n" ] || { tail -5 "$out/client.txt" >&2; echo "load: only ${accepted:-0} of $n accepted" >&2; }
    rate=${rate:-0}
  fi
  awk -v r="$rate" -v n="$n" '{printf "%.0f %.2f %.1f\n", r, ($1 + $2) * 1e6 / n, $3 / 1024}' "$out/time.txt"
}
# The client's system calls over N notifications: "total read write" per notification.
syscalls() { # WHICH COUNT CONNECTIONS
  local which=$1 n=$2 c=$3
  if [ "$which" = h2load ]; then
    set -- h2load -n "$n" -c "$c" -m "$streams" -t 1 \
      -H 'apns-topic: com.example.app' -H 'apns-push-type: alert' -H 'apns-priority: 10' \
      -H "authorization: bearer $jwt" -d "$out/payload.json" "https://127.0.0.1:$port/3/device/$token"
  else
    # shellcheck disable=SC2046
    set -- $(load_cmd "$n" "$c")
  fi
  case $syscall_tool in
    perf)
      $client_cpu perf stat -x, -o "$out/sys.txt" \
        -e raw_syscalls:sys_enter,syscalls:sys_enter_read,syscalls:sys_enter_write -- "$@" > "$out/client.txt" 2>&1 || true
      awk -F, -v n="$n" '$3 ~ /raw_syscalls:sys_enter/ {t=$1} $3 ~ /sys_enter_read$/ {r=$1} $3 ~ /sys_enter_write$/ {w=$1}
        END {printf "%.2f %.2f %.2f\n", t / n, r / n, w / n}' "$out/sys.txt"
      ;;
    strace)
      $client_cpu strace -c -f -o "$out/sys.txt" -- "$@" > "$out/client.txt" 2>&1 || true
      awk -v n="$n" '$NF == "total" {t=$4} $NF == "read" {r=$4} $NF == "write" {w=$4}
        END {printf "%.2f %.2f %.2f\n", t / n, r / n, w / n}' "$out/sys.txt"
      ;;
    *) echo "- - -" ;;
  esac
}
server_ticks() { awk '{print $14 + $15}' "/proc/$MOCK_PID/stat"; }
now_ms() { date +%s%3N; }
median() { sort -g | awk '{a[NR]=$1} END {if (NR == 0) print 0; else print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
col() { awk -v k="$1" '{print $k}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", (b > 0) ? a / b : 0}'; }
hz=$(getconf CLK_TCK)

echo "workload: at least $count notifications per run, 200-byte payload, $streams streams per connection, TLS 1.3, token auth;"
echo "  every answer delayed by the mock; server on ${server_cpu:-any CPU}, clients on ${client_cpu:-any CPU};"
echo "  $runs runs per client and configuration, interleaved, medians; system calls: $syscall_tool ($sys_count notifications)"
if [ "${LAT_MOCK_CAPACITY:-1}" != 0 ]; then
  echo
  # A failed capacity pass is reported, not the end of the client benchmark that follows.
  CAP_DELAY=${LAT_CAPACITY_DELAY:-20} bash scripts/mock-capacity.sh "$build" "$pki" "${LAT_MOCK_CLI:-$build/swiftpush-cli}" \
    || echo "bench-latency: the mock capacity pass failed (above); the client rows follow" >&2
fi
summary=()
auto_rows=()
auto_max=${LAT_AUTO_MAX:-$(printf '%s\n' $conn_list | sort -n | tail -1)}
for delay in $delays; do
  mock_stop_all
  MOCK_RUNNER=$server_cpu mock_start "latency-$delay" "${LAT_MOCK_CLI:-$build/swiftpush-cli}" "$pki" --lenient-initial-limit --delay-ms "$delay"
  port=$MOCK_PORT
  # Warm-up (page cache, CPU frequency, the server's allocator).
  timed swiftpush 5000 1 >/dev/null
  for c in $conn_list; do
    n=$count
    [ $((min_rtts * c * streams)) -gt "$n" ] && n=$((min_rtts * c * streams))
    echo
    echo "delay ${delay} ms, $c connection(s) x $streams streams, $n notifications per run" \
      "(Little's law: at most $((c * streams * 1000 / delay)) notifications/s)"
    : > "$out/lib"; : > "$out/h2"; : > "$out/srv-lib"; : > "$out/srv-h2"
    for i in $(seq 1 "$runs"); do
      for which in h2load swiftpush; do
        t0=$(server_ticks); w0=$(now_ms)
        r=$(timed "$which" "$n" "$c")
        t1=$(server_ticks); w1=$(now_ms)
        srv=$(awk -v a="$t0" -v b="$t1" -v n="$n" -v hz="$hz" -v ms=$((w1 - w0)) \
          'BEGIN {printf "%.2f %.0f", (b - a) * 1e6 / hz / n, (ms > 0) ? (b - a) * 100000 / hz / ms : 0}')
        if [ "$which" = h2load ]; then echo "$r" >> "$out/h2"; echo "$srv" >> "$out/srv-h2"
        else echo "$r" >> "$out/lib"; echo "$srv" >> "$out/srv-lib"; fi
        printf '  run %d %-9s %8s /s  %6s CPU-us/notification  %6s MB RSS | server %s CPU-us/answer, %s%% of its core\n' \
          "$i" "$which" $r $srv
      done
    done
    rate=$(col 1 < "$out/lib" | median); cpu=$(col 2 < "$out/lib" | median); rss=$(col 3 < "$out/lib" | median)
    h2=$(col 1 < "$out/h2" | median); h2cpu=$(col 2 < "$out/h2" | median); h2rss=$(col 3 < "$out/h2" | median)
    srv_lib=$(col 1 < "$out/srv-lib" | median); busy_lib=$(col 2 < "$out/srv-lib" | median)
    srv_h2=$(col 1 < "$out/srv-h2" | median); busy_h2=$(col 2 < "$out/srv-h2" | median)
    sys_lib="- - -"; sys_h2="- - -"
    if [ "$syscall_tool" != none ]; then
      sys_h2=$(syscalls h2load "$sys_count" "$c")
      sys_lib=$(syscalls swiftpush "$sys_count" "$c")
    fi
    read -r st sr sw <<< "$sys_lib"
    read -r ht hr hw <<< "$sys_h2"
    echo "  medians      | swiftpush | h2load | ratio"
    echo "  rate /s      | $rate | $h2 | $(ratio "$rate" "$h2")"
    echo "  CPU-us/notif | $cpu | $h2cpu | $(ratio "$cpu" "$h2cpu")"
    echo "  peak RSS MB  | $rss | $h2rss | $(ratio "$rss" "$h2rss")"
    echo "  syscalls/notif (total, read, write) | $st $sr $sw | $ht $hr $hw | $(ratio "$st" "$ht")"
    echo "  server CPU-us/answer (share of its core) | $srv_lib ($busy_lib%) | $srv_h2 ($busy_h2%)"
    summary+=("| $delay | $c | $rate ($(ratio "$rate" "$h2")×) | $h2 | $cpu ($(ratio "$cpu" "$h2cpu")×) | $h2cpu | $st / $ht | $rss / $h2rss |")
    echo "swiftpush-latency-bench delay_ms=$delay connections=$c rate=$rate h2load_rate=$h2 cpu_us=$cpu h2load_cpu_us=$h2cpu"
  done
  # The self-sizing pool: starts with one connection, may grow to LAT_AUTO_MAX (default the
  # largest of LAT_CONNECTIONS); its rate is to be read against the fixed rows above.
  if [ "$auto_max" -gt 1 ]; then
    n=$count
    [ $((min_rtts * auto_max * streams)) -gt "$n" ] && n=$((min_rtts * auto_max * streams))
    echo
    echo "delay ${delay} ms, self-sizing pool from 1 up to $auto_max connections x $streams streams, $n notifications per run"
    : > "$out/auto"
    for i in $(seq 1 "$runs"); do
      r=$(timed swiftpush-auto "$n" "$auto_max")
      echo "$r" >> "$out/auto"
      printf '  run %d %-14s %8s /s  %6s CPU-us/notification  %6s MB RSS\n' "$i" swiftpush-auto $r
    done
    rate=$(col 1 < "$out/auto" | median); cpu=$(col 2 < "$out/auto" | median)
    auto_rows+=("| $delay | 1 → $auto_max | $rate | $cpu |")
    echo "swiftpush-latency-bench delay_ms=$delay connections=1..$auto_max rate=$rate cpu_us=$cpu"
  fi
done
echo
echo "| delay ms | connections | swiftpush /s | h2load /s | swiftpush CPU-µs/notification | h2load CPU-µs/request | syscalls/notification swiftpush / h2load | peak RSS MB swiftpush / h2load |"
echo "|---|---|---|---|---|---|---|---|"
printf '%s\n' "${summary[@]}"
if [ ${#auto_rows[@]} -gt 0 ]; then
  echo
  echo "| delay ms | self-sizing pool | swiftpush /s | swiftpush CPU-µs/notification |"
  echo "|---|---|---|---|"
  printf '%s\n' "${auto_rows[@]}"
fi
