#!/usr/bin/env bash
# make bench-worker: the queue-fed worker's end-to-end rate against the raw library rate.
#   scripts/bench-worker.sh RELEASE_DIR PKI_DIR
# N notifications (BENCH_COUNT, default 200,000) are enqueued first, as single entries (one
# notification each), as multicast entries of T tokens, or as batch entries of N single
# notifications ("bN"; BENCH_TOKENS, default "1 100 500 b500": a row each); then 1 worker, then 2 workers (a fresh shard each) drain them to the mock; the rate
# is from the worker's start to the last outcome recorded (measured on the outcomes stream's own
# ids, which are Redis's millisecond clock). The raw library rate is load.c
# (Bindings/c/examples) against the same mock in the same run. Redis (AOF, everysec), the mock
# and the workers share this machine's cores. Each run also prints the CPU time per notification
# of the workers, Redis (the enqueue included: its clock starts before the XADDs) and the mock,
# the fleet ceiling that Redis's share gives (1,000,000 / Redis-µs per notification, per Redis
# core), and Redis's own time per notification by command (INFO commandstats; a script's
# commands are counted both on their own and inside its EVALSHA), which is where a profile
# starts. Last lines, one per row:
#   swiftpush-worker-bench workers=W tokens_per_entry=T rate=R library_rate=L ratio=R/L redis_us=U worker_us=U lost=0 duplicates=D peak_rss_mb=M library_cpu_us=C worker_x_library_cpu=X
# (a batch row: tokens_per_entry=1 batch=N; library_cpu_us: load.c's own client CPU per
# notification in the same run, worker_x_library_cpu: worker_us over it, issue 22's worker target).
#
# Knobs: BENCH_OUTCOME_FORMAT (1): the workers' outcome_format (2: one outcomes entry per settled
# batch, docs/worker.md). BENCH_WORKERS ("1 2"): the worker counts to run. BENCH_RUNS (1): rounds; with more
# than one, every round runs everything again (load.c included) and the summary gives medians.
# BENCH_AB ("name=CLI ..."): compare worker binaries in one run (an A/B of a hot-path change:
# the rounds interleave the variants, so they share the machine's state); the default is the
# RELEASE_DIR's own, named "this". A variant's CLI may end in @F to run it with outcome_format F
# (e.g. BENCH_AB="f2=path/swiftpush-cli@2 f1=path/swiftpush-cli@1"). The summary line is the first variant's.
#
# Latency rows (issue 31, item 4), after the rate rows of each round: 1 worker (default settings),
# single entries XADDed one at a time at BENCH_LATENCY_RATES a second ("100 1000 5000"; "" for
# none) for BENCH_LATENCY_SECONDS (3) each, by scripts/worker-latency.py: percentiles of XADD to
# the APNs request (the producer's clock against the time a recording mock processed it) and of
# XADD to the outcome (against the producer reading it from outcomes:{s}), and the CPU the worker
# and Redis spent (% of one core over the run, the XADDs in Redis's). Last lines, one per variant and rate:
#   swiftpush-worker-latency variant=V rate=R request_p50_ms= request_p99_ms= outcome_p50_ms= outcome_p99_ms= worker_cpu_pct= redis_cpu_pct= missing=0
# (medians over the rounds; missing: entries without a request or an outcome, summed).
# BENCH_TOKENS="" runs the latency rows alone.
#
# Fast-lane row (issue 32, item 1), with BENCH_FAST=1: BENCH_FAST_BACKLOG (200,000; 1,000,000 by
# the knob) notifications in multicast entries of 500 tokens drained by 1 worker (max_in_flight
# 10,000, fast_reserve 500, one connection) against the recording mock, once alone and once while
# scripts/worker-latency.py --lane fast --after-drain XADDs single entries to push:{s}:fast at 100 a
# second for BENCH_LATENCY_SECONDS: the singles' XADD-to-request and XADD-to-outcome percentiles
# (read once the backlog drained, so that the script's parsing does not slow the drain), and the
# bulk rate of both drains (first request of the worker to the last outcome). Last line, per variant:
#   swiftpush-worker-fastlane variant=V backlog=N rate_alone= rate_beside= rate_drop_pct= request_p50_ms= request_p99_ms= outcome_p50_ms= outcome_p99_ms= left_at_end= missing=0
# (left_at_end: backlog entries still unsettled when the singles ended: above 0, they were sent
# while the backlog drained). BENCH_TOKENS="" BENCH_LATENCY_RATES="" BENCH_FAST=1 runs it alone.
#
# Throttle row (issue 32, item 4), with BENCH_THROTTLE=1: two workers (max_in_flight 10,000, one
# connection each) on a fresh shard against the recording mock. First an unthrottled campaign of
# BENCH_THROTTLE_BULK (100,000) notifications alone; then the same beside a campaign throttled
# at BENCH_THROTTLE_RATE (1,000/s; `swiftpush campaign throttle`) of RATE x
# BENCH_THROTTLE_SECONDS (15) notifications (multicast entries of 100 and 500 tokens, both
# enqueued before the workers start). From the mock's request times: the throttled campaign's
# rate (first to last request), the most requests in any 10 s window over 10 s (the issue's
# "within 10% over any 10 s window") and in any 1 s, and the unthrottled campaign's rate alone
# and beside it. Last line, per variant:
#   swiftpush-worker-throttle variant=V rate_limit=R throttled_rate= max_10s_rate= max_10s_pct_of_limit= max_1s= unthrottled_alone= unthrottled_beside= missing=0
# BENCH_TOKENS="" BENCH_LATENCY_RATES="" BENCH_THROTTLE=1 runs it alone.
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(cd "${1:?usage: bench-worker.sh RELEASE_DIR PKI_DIR}" && pwd)
pki=$(cd "${2:?}" && pwd)
count=${BENCH_COUNT:-200000}
token_counts=${BENCH_TOKENS-1 100 500 b500}
latency_rates=${BENCH_LATENCY_RATES-100 1000 5000}
latency_seconds=${BENCH_LATENCY_SECONDS:-3}
fast_row=${BENCH_FAST:-}
fast_backlog=${BENCH_FAST_BACKLOG:-200000}
throttle_row=${BENCH_THROTTLE:-}
throttle_rate=${BENCH_THROTTLE_RATE:-1000}
throttle_seconds=${BENCH_THROTTLE_SECONDS:-15}
throttle_bulk=${BENCH_THROTTLE_BULK:-100000}
runs=${BENCH_RUNS:-1}
outcome_format=${BENCH_OUTCOME_FORMAT:-1}
cli=$build/swiftpush-cli
variants=${BENCH_AB:-this=$cli}
source scripts/mock-ctl.sh
mock_workspace
REDIS_PID=""
trap 'for p in ${WORKERS:-}; do kill -9 "$p" 2>/dev/null || true; done; [ -n "$REDIS_PID" ] && kill "$REDIS_PID" 2>/dev/null; mock_stop_all; rm -rf "$out"' EXIT

redis_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mkdir -p "$out/redis"
# No automatic AOF rewrite: it forked a child in the middle of some drains and not others (the
# file grows by ~100 MB per drain), which made rounds differ by 2x; the AOF is rewritten between
# drains instead (below), so every drain starts from a small file and writes the same.
redis-server --port "$redis_port" --bind 127.0.0.1 --dir "$out/redis" --appendonly yes --appendfsync everysec \
  --auto-aof-rewrite-percentage 0 \
  --save "" > "$out/redis.log" 2>&1 &
REDIS_PID=$!
for _ in $(seq 1 100); do redis-cli -p "$redis_port" ping 2>/dev/null | grep -q PONG && break; sleep 0.1; done
# The latency rows' mock records each request's arrival; started first: MOCK_PID stays the bench mock's.
if [ -n "$latency_rates" ] || [ -n "$fast_row" ] || [ -n "$throttle_row" ]; then
  mock_start latency "$cli" "$pki" --lenient-initial-limit --record --control-port-file "$out/latency-control.port"
  latency_port=$MOCK_PORT latency_mock_pid=$MOCK_PID
fi
mock_start bench "$cli" "$pki" --lenient-initial-limit
port=$MOCK_PORT
rcli() { redis-cli -p "$redis_port" "$@"; }

# utime + stime of a process, in clock ticks.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)
per_note() { python3 -c "import sys; print(f'{int(sys.argv[1]) * 1e6 / int(sys.argv[2]) / int(sys.argv[3]):.2f}')" "$1" "$hz" "$count"; }

build_load "$build" "$out/load"
library() {
  "$out/load" --host localhost --port "$port" --ca "$pki/ca.pem" --key "$pki/AuthKey_TESTKEY001.p8" \
    --key-id TESTKEY001 --team-id TEAM123456 --topic com.example.app --count "$count" --window 10000 --quiet > "$out/load.txt" 2>&1
  library_rate=$(sed -E -n 's/^load-result.* rate=([0-9.]+).*/\1/p' "$out/load.txt")
  library_cpu=$(sed -E -n 's/^load-result.* cpu_us_per_notification=([0-9.]+).*/\1/p' "$out/load.txt")
  echo "library (load.c, 1 connection, window 10000): $library_rate notifications/s, client CPU $library_cpu us per notification"
  echo "library $library_rate $library_cpu" >> "$out/results"
}

python3 - "$count" > "$out/entries.jsonl" <<'PY'
import json, sys
pad = "x" * 120
for i in range(int(sys.argv[1])):
    print(json.dumps({"id": f"b-{i}", "app": "bench", "token": "ff%062x" % (i % 10007 + 1),
                      "payload": {"aps": {"alert": "Hello from swiftpush"}, "pad": pad}}))
PY
# The multicast rows' tokens (the same tokens as the single entries', in order) and payload.
python3 - "$count" "$out/tokens.txt" "$out/payload.json" <<'PY'
import json, sys
n = int(sys.argv[1])
open(sys.argv[2], "w").write("".join("ff%062x\n" % (i % 10007 + 1) for i in range(n)))
open(sys.argv[3], "w").write(json.dumps({"aps": {"alert": "Hello from swiftpush"}, "pad": "x" * 120}))
PY

# enqueue CLI SHARD T: the N notifications into push:{SHARD} with CLI's enqueue (a variant's own:
# each variant drains what its producer writes), as single entries (T=1), batch entries of N of
# them (T=bN) or multicast entries of T tokens.
enqueue() {
  local ecli=$1; shift
  if [ "${2#b}" != "$2" ]; then
    "$ecli" enqueue --redis "127.0.0.1:$redis_port" --shard "$1" --file "$out/entries.jsonl" --batch "${2#b}" > /dev/null
  elif [ "$2" -eq 1 ]; then
    "$ecli" enqueue --redis "127.0.0.1:$redis_port" --shard "$1" --file "$out/entries.jsonl" --batch 1 > /dev/null
  else
    "$ecli" enqueue --redis "127.0.0.1:$redis_port" --shard "$1" --tokens "$out/tokens.txt" --payload "@$out/payload.json" \
      --id b --app bench --per-entry "$2" > /dev/null
  fi
}

# drain VARIANT CLI WORKERS ROUND T: enqueues the notifications (entries of T tokens) on a fresh
# shard and drains them with WORKERS workers of CLI; prints the figures and appends
# "VARIANT WORKERS T rate lost dups rss redis_us worker_us".
drain() {
  local variant=$1 wcli=${2%@*} workers=$3 round=$4 tokens=$5 outcome_format=$outcome_format
  [ "$2" != "$wcli" ] && outcome_format=${2##*@}
  local shard=$variant-w$workers-r$round-t$tokens
  cat > "$out/$shard.json" <<JSON
{"redis": {"host": "127.0.0.1", "port": $redis_port}, "shard": "$shard", "max_in_flight": 10000, "batch": 1000,
 "outcome_format": $outcome_format,
 "apps": {"bench": {"key_file": "$pki/AuthKey_TESTKEY001.p8", "key_id": "TESTKEY001", "team_id": "TEAM123456",
                    "host": "localhost", "port": $port, "ca_file": "$pki/ca.pem", "topics": ["com.example.app"],
                    "connections": 1}}}
JSON
  rcli CONFIG RESETSTAT > /dev/null
  local redis_t0 mock_t0 start_ms
  # Redis's clock starts before the enqueue: its figure is everything Redis does per notification.
  redis_t0=$(cpu_ticks "$REDIS_PID")
  enqueue "$wcli" "$shard" "$tokens"
  mock_t0=$(cpu_ticks "$MOCK_PID")
  start_ms=$(rcli TIME | python3 -c 'import sys; s, us = sys.stdin.read().split(); print(int(s) * 1000 + int(us) // 1000)')
  WORKERS=""
  for w in $(seq 1 "$workers"); do
    ${WORKER_RUNNER:-} "$wcli" worker --config "$out/$shard.json" --consumer "w$w" --quiet 2> "$out/w$w.err" &
    WORKERS="$WORKERS $!"
  done
  until stream_drained "$redis_port" "$shard"; do
    for p in $WORKERS; do kill -0 "$p" 2>/dev/null || { cat "$out"/w*.err; echo "a worker died"; exit 1; }; done
    sleep 0.05
  done
  local rss=0 worker_ticks=0 r
  for p in $WORKERS; do
    r=$(awk '/VmHWM/ {print $2}' "/proc/$p/status"); [ "$r" -gt "$rss" ] && rss=$r
    worker_ticks=$((worker_ticks + $(cpu_ticks "$p")))
    kill -TERM "$p"
  done
  local redis_ticks=$(( $(cpu_ticks "$REDIS_PID") - redis_t0 )) mock_ticks=$(( $(cpu_ticks "$MOCK_PID") - mock_t0 ))
  for p in $WORKERS; do wait "$p"; done
  WORKERS=""
  local worker_us redis_us
  worker_us=$(per_note $worker_ticks); redis_us=$(per_note $redis_ticks)
  echo "$variant, $workers worker(s), $tokens token(s) per entry: CPU-us per notification: worker(s) $worker_us, redis $redis_us (enqueue included), mock $(per_note $mock_ticks); fleet ceiling $(python3 -c "import sys; print(f'{1e6 / max(float(sys.argv[1]), 0.01):.0f}')" "$redis_us")/s per Redis core"
  rcli INFO commandstats | python3 -c '
import re, sys
n = int(sys.argv[1])
rows = [(m[1], int(m[2]), int(m[3])) for m in re.finditer(r"cmdstat_(\w+):calls=(\d+),usec=(\d+)", sys.stdin.read())]
print("  Redis usec per notification by command: " + ", ".join(
    f"{name} {usec / n:.2f} ({calls} calls)" for name, calls, usec in sorted(rows, key=lambda r: -r[2]) if usec / n >= 0.01))
' "$count"
  local last_ms lost duplicates
  # Taken whole before sed reads it: a format-2 entry is large, and head's early exit would cut
  # redis-cli short with SIGPIPE (fatal under pipefail).
  last_ms=$(sed -n '1s/-.*//p' <<< "$(rcli XREVRANGE "outcomes:{$shard}" + - COUNT 1)")
  "$cli" outcomes --redis "127.0.0.1:$redis_port" --shard "$shard" --json > "$out/$shard.outcomes"
  # A notification is (id, position in its entry): a multicast's accepted tokens come as one
  # line with their positions as ranges.
  read -r lost duplicates <<< "$(python3 - "$out/$shard.outcomes" "$count" <<'PY'
import json, sys
seen, dups = set(), 0
for line in open(sys.argv[1]):
    o = json.loads(line)
    at = [o.get("index", 0)]
    if "indexes" in o:
        at = []
        for part in filter(None, o["indexes"].split(",")):
            a, _, b = part.partition("-")
            at += range(int(a), int(b or a) + 1)
    for p in at:
        key = (o["id"], p)
        dups += key in seen
        seen.add(key)
print(int(sys.argv[2]) - len(seen), dups)
PY
)"
  rm -f "$out/$shard.outcomes"
  python3 - "$variant" "$workers" "$tokens" "$count" "$start_ms" "$last_ms" "$lost" "$duplicates" "$rss" "$redis_us" "$worker_us" >> "$out/results" <<'PY'
import sys
v, w, t, n, t0, t1, lost, dup, rss, redis_us, worker_us = sys.argv[1:]
print(v, w, t, f"{int(n) / ((int(t1) - int(t0)) / 1000):.0f}", lost, dup, f"{int(rss) / 1024:.1f}", redis_us, worker_us)
PY
  echo "  $(tail -1 "$out/results" | awk '{print $4}') notifications/s, lost=$lost duplicates=$duplicates peak_rss_mb=$(tail -1 "$out/results" | awk '{print $7}')"
  # The next drain starts from an empty Redis (the guards of 200,000 ids would stay a day).
  rcli FLUSHALL > /dev/null
  rcli BGREWRITEAOF > /dev/null
  until grep -q '^aof_rewrite_in_progress:0' <<< "$(rcli INFO persistence)" \
        && grep -q '^aof_rewrite_scheduled:0' <<< "$(rcli INFO persistence)"; do sleep 0.1; done
}

# latency VARIANT CLI ROUND RATE: one worker of CLI on a fresh shard, fed single entries one at a
# time at RATE a second (scripts/worker-latency.py); appends "VARIANT RATE figures..." to $out/latency.
latency() {
  local variant=$1 wcli=${2%@*} round=$3 rate=$4 outcome_format=$outcome_format
  [ "$2" != "$wcli" ] && outcome_format=${2##*@}
  local shard=lat-$variant-r$round-$rate
  cat > "$out/$shard.json" <<JSON
{"redis": {"host": "127.0.0.1", "port": $redis_port}, "shard": "$shard", "outcome_format": $outcome_format,
 "apps": {"bench": {"key_file": "$pki/AuthKey_TESTKEY001.p8", "key_id": "TESTKEY001", "team_id": "TEAM123456",
                    "host": "localhost", "port": $latency_port, "ca_file": "$pki/ca.pem", "topics": ["com.example.app"],
                    "connections": 1}}}
JSON
  ${WORKER_RUNNER:-} "$wcli" worker --config "$out/$shard.json" --consumer w1 --quiet 2> "$out/w1.err" &
  WORKERS=$!
  local w_t0 r_t0 m_t0 t0 line
  w_t0=$(cpu_ticks "$WORKERS"); r_t0=$(cpu_ticks "$REDIS_PID"); m_t0=$(cpu_ticks "$latency_mock_pid"); t0=$(date +%s%N)
  line=$(python3 scripts/worker-latency.py "$redis_port" "$shard" "$rate" "$latency_seconds" \
           "http://127.0.0.1:$(cat "$out/latency-control.port")") || { cat "$out/w1.err"; exit 1; }
  local pcts
  pcts=$(python3 -c "import sys; w, r, m, ns, hz = map(int, sys.argv[1:]); print(f'{w * 1e11 / hz / ns:.1f} {r * 1e11 / hz / ns:.1f} {m * 1e11 / hz / ns:.1f}')" \
           $(( $(cpu_ticks "$WORKERS") - w_t0 )) $(( $(cpu_ticks "$REDIS_PID") - r_t0 )) $(( $(cpu_ticks "$latency_mock_pid") - m_t0 )) \
           $(( $(date +%s%N) - t0 )) "$hz")
  local mock_pct=${pcts##* }; pcts=${pcts% *}
  kill -TERM "$WORKERS"; wait "$WORKERS" || true
  WORKERS=""
  echo "$variant, $rate/s: $line worker_cpu_pct=${pcts% *} redis_cpu_pct=${pcts#* } mock_cpu_pct=$mock_pct"
  echo "$variant $rate $line ${pcts}" >> "$out/latency"
  rcli FLUSHALL > /dev/null
}

# fast_drain VARIANT CLI ROUND WITH_SINGLES: the fast-lane row's backlog on a fresh shard, drained
# by one worker of CLI on the recording mock, with (1) or without (0) singles on the fast lane
# meanwhile; prints "rate left_at_end latency-line".
fast_drain() {
  local variant=$1 wcli=${2%@*} round=$3 singles=$4
  local shard=fast-$variant-r$round-s$singles
  cat > "$out/$shard.json" <<JSON
{"redis": {"host": "127.0.0.1", "port": $redis_port}, "shard": "$shard", "max_in_flight": 10000, "batch": 1000,
 "fast_reserve": 500,
 "apps": {"bench": {"key_file": "$pki/AuthKey_TESTKEY001.p8", "key_id": "TESTKEY001", "team_id": "TEAM123456",
                    "host": "localhost", "port": $latency_port, "ca_file": "$pki/ca.pem", "topics": ["com.example.app"],
                    "connections": 1}}}
JSON
  curl -s -X POST "http://127.0.0.1:$(cat "$out/latency-control.port")/record/reset" > /dev/null
  "$wcli" enqueue --redis "127.0.0.1:$redis_port" --shard "$shard" --tokens "$out/fast-tokens.txt" --payload "@$out/payload.json" \
    --id fb --app bench --per-entry 500 > /dev/null
  ${WORKER_RUNNER:-} "$wcli" worker --config "$out/$shard.json" --consumer w1 --quiet 2> "$out/w1.err" &
  WORKERS=$!
  local line="-" left=0
  if [ "$singles" = 1 ]; then
    line=$(python3 scripts/worker-latency.py "$redis_port" "$shard" 100 "$latency_seconds" \
             "http://127.0.0.1:$(cat "$out/latency-control.port")" --lane fast --after-drain) || { cat "$out/w1.err"; exit 1; }
    # The backlog's entries still in the stream when the singles were all settled (the script
    # reads it then, and returns once everything drained: worker-latency.py --after-drain).
    left=$(sed -n 's/.* backlog_left=\([0-9]*\).*/\1/p' <<< "$line")
  fi
  until stream_drained "$redis_port" "$shard"; do
    kill -0 "$WORKERS" 2>/dev/null || { cat "$out/w1.err"; echo "the worker died"; exit 1; }
    sleep 0.05
  done
  kill -TERM "$WORKERS"; wait "$WORKERS" || true
  WORKERS=""
  # The bulk rate: the backlog's notifications over its first to last outcome record (Redis's
  # clock: the outcome stream's ids), the singles' own outcomes aside.
  local rate
  rate=$("$cli" outcomes --redis "127.0.0.1:$redis_port" --shard "$shard" --json | python3 -c '
import json, sys
times, n = [], 0
for line in sys.stdin:
    o = json.loads(line)
    if o["id"].startswith("fb#"):
        n += o.get("count", 1)
        times.append(int(o["stream_id"].split("-")[0]) if "stream_id" in o else 0)
print(f"{n / max((max(times) - min(times)) / 1000, 1e-3):.0f}" if times and min(times) > 0 else "0")')
  echo "$rate $left $line"
  rcli FLUSHALL > /dev/null
}

# fast VARIANT CLI ROUND: the fast-lane row (both drains); appends to $out/fast.
fast() {
  local alone beside
  alone=$(fast_drain "$1" "$2" "$3" 0)
  beside=$(fast_drain "$1" "$2" "$3" 1)
  echo "$1, fast lane: backlog $fast_backlog alone ${alone%% *}/s; beside singles at 100/s: ${beside}"
  echo "$1 ${alone%% *} $beside" >> "$out/fast"
}
# throttle_drain VARIANT CLI ROUND WITH_THROTTLED: the throttle row's unthrottled campaign, alone
# (0) or beside the throttled one (1), on a fresh shard, drained by two workers of CLI on the
# recording mock; prints the measures (python's line below) from the mock's records.
throttle_drain() {
  local variant=$1 wcli=${2%@*} round=$3 throttled=$4
  local shard=throttle-$variant-r$round-t$throttled
  cat > "$out/$shard.json" <<JSON
{"redis": {"host": "127.0.0.1", "port": $redis_port}, "shard": "$shard", "max_in_flight": 10000, "batch": 1000,
 "apps": {"bench": {"key_file": "$pki/AuthKey_TESTKEY001.p8", "key_id": "TESTKEY001", "team_id": "TEAM123456",
                    "host": "localhost", "port": $latency_port, "ca_file": "$pki/ca.pem", "topics": ["com.example.app"],
                    "connections": 1}}}
JSON
  curl -s -X POST "http://127.0.0.1:$(cat "$out/latency-control.port")/record/reset" > /dev/null
  "$wcli" enqueue --redis "127.0.0.1:$redis_port" --shard "$shard" --tokens "$out/throttle-bulk.txt" --payload "@$out/payload.json" \
    --id tb --app bench --campaign bulk --per-entry 500 --quiet > /dev/null
  if [ "$throttled" = 1 ]; then
    "$wcli" enqueue --redis "127.0.0.1:$redis_port" --shard "$shard" --tokens "$out/throttle-slow.txt" --payload "@$out/payload.json" \
      --id ts --app bench --campaign slow --per-entry 100 --quiet > /dev/null
    "$wcli" campaign throttle slow "$throttle_rate" --redis "127.0.0.1:$redis_port" --shard "$shard" > /dev/null
  fi
  ${WORKER_RUNNER:-} "$wcli" worker --config "$out/$shard.json" --consumer w1 --quiet 2> "$out/w1.err" &
  WORKERS=$!
  ${WORKER_RUNNER:-} "$wcli" worker --config "$out/$shard.json" --consumer w2 --quiet 2> "$out/w2.err" &
  WORKERS="$WORKERS $!"
  until stream_drained "$redis_port" "$shard"; do
    for p in $WORKERS; do kill -0 "$p" 2>/dev/null || { cat "$out/w1.err" "$out/w2.err"; echo "a worker died"; exit 1; }; done
    sleep 0.1
  done
  # shellcheck disable=SC2086
  kill -TERM $WORKERS; for p in $WORKERS; do wait "$p" || true; done
  WORKERS=""
  curl -s "http://127.0.0.1:$(cat "$out/latency-control.port")/record" > "$out/throttle.record"
  python3 - "$out/throttle.record" "$throttle_bulk" "$([ "$throttled" = 1 ] && echo $((throttle_rate * throttle_seconds)) || echo 0)" <<'PY'
import json, sys
records, bulk_n, slow_n = json.load(open(sys.argv[1])), int(sys.argv[2]), int(sys.argv[3])
# Tokens: the unthrottled campaign's begin "ff", the throttled one's "ee" (the files above).
tb = sorted(r["received_us"] for r in records if r["device_token"].startswith("ff"))
ts = sorted(r["received_us"] for r in records if r["device_token"].startswith("ee"))
missing = max(0, bulk_n - len(tb)) + max(0, slow_n - len(ts))
def most_in(t, window_us):
    j, most = 0, 0
    for i in range(len(t)):
        while t[i] - t[j] >= window_us: j += 1
        most = max(most, i - j + 1)
    return most
bulk_rate = len(tb) / max((tb[-1] - tb[0]) / 1e6, 1e-3) if tb else 0
if ts:
    slow_rate = (len(ts) - 1) / max((ts[-1] - ts[0]) / 1e6, 1e-3)
    print(f"{bulk_rate:.0f} {slow_rate:.1f} {most_in(ts, 10_000_000) / 10:.1f} {most_in(ts, 1_000_000)} {missing}")
else:
    print(f"{bulk_rate:.0f} - - - {missing}")
PY
  rcli FLUSHALL > /dev/null
}

# throttle VARIANT CLI ROUND: the throttle row (both drains); appends to $out/throttle.
throttle() {
  local alone beside
  alone=$(throttle_drain "$1" "$2" "$3" 0)
  beside=$(throttle_drain "$1" "$2" "$3" 1)
  read -r bulk_beside slow_rate max10 max1 missing <<< "$beside"
  echo "$1, throttle: unthrottled ${alone%% *}/s alone, ${bulk_beside}/s beside a campaign throttled at $throttle_rate/s:" \
    "it went at $slow_rate/s, at most $max10/s over any 10 s, $max1 in any 1 s (missing ${alone##* }+$missing)"
  echo "$1 ${alone%% *} ${alone##* } $beside" >> "$out/throttle"
}
if [ -n "$throttle_row" ]; then
  python3 -c "import sys; open(sys.argv[1], 'w').write(''.join('ff%062x\n' % (i % 10007 + 1) for i in range(int(sys.argv[2]))))" \
    "$out/throttle-bulk.txt" "$throttle_bulk"
  python3 -c "import sys; open(sys.argv[1], 'w').write(''.join('ee%062x\n' % (i % 10007 + 1) for i in range(int(sys.argv[2]))))" \
    "$out/throttle-slow.txt" "$((throttle_rate * throttle_seconds))"
fi

if [ -n "$fast_row" ]; then
  python3 -c "import sys; open(sys.argv[1], 'w').write(''.join('ff%062x\n' % (i % 10007 + 1) for i in range(int(sys.argv[2]))))" \
    "$out/fast-tokens.txt" "$fast_backlog"
fi

for round in $(seq 1 "$runs"); do
  library
  for tokens in $token_counts; do
    for workers in ${BENCH_WORKERS:-1 2}; do
      for v in $variants; do drain "${v%%=*}" "${v#*=}" "$workers" "$round" "$tokens"; done
    done
  done
  for rate in $latency_rates; do
    for v in $variants; do latency "${v%%=*}" "${v#*=}" "$round" "$rate"; done
  done
  if [ -n "$fast_row" ]; then
    for v in $variants; do fast "${v%%=*}" "${v#*=}" "$round"; done
  fi
  if [ -n "$throttle_row" ]; then
    for v in $variants; do throttle "${v%%=*}" "${v#*=}" "$round"; done
  fi
done

# Medians per variant and worker count (one round: its figures); lost and duplicates summed,
# peak RSS the largest.
python3 - "$out/results" "${variants%%=*}" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
lib = statistics.median(float(r[1]) for r in rows if r[0] == "library")
lib_cpu = statistics.median(float(r[2]) for r in rows if r[0] == "library")
runs = {}
for r in rows:
    if r[0] != "library":
        runs.setdefault((r[0], int(r[1]), r[2]), []).append(r[3:])
first = sys.argv[2]
size = lambda t: (t.startswith("b"), int(t.lstrip("b")))
ordered = sorted(runs, key=lambda k: (k[0] == first, size(k[2]), k[1]))
for v, w, t in ordered:
    got = runs[(v, w, t)]
    rate = statistics.median(float(g[0]) for g in got)
    if len(got) > 1 or len({k[0] for k in runs}) > 1:
        print(f"{v}, {w} worker(s), {t} token(s) per entry: rates {' '.join(g[0] for g in got)}: median {rate:.0f}, {rate / lib:.3f} x library")
print(f"library (load.c) client CPU: {lib_cpu:.2f} us per notification (median); worker_us / that per row below")
for v, w, t in ordered:
    if v != first:
        continue
    got = runs[(v, w, t)]
    rate = statistics.median(float(g[0]) for g in got)
    redis_us = statistics.median(float(g[4]) for g in got)
    worker_us = statistics.median(float(g[5]) for g in got)
    shape = f"tokens_per_entry=1 batch={t[1:]}" if t.startswith("b") else f"tokens_per_entry={t}"
    print(f"swiftpush-worker-bench workers={w} {shape} rate={rate:.0f} library_rate={lib:.0f} ratio={rate / lib:.3f} "
          f"redis_us={redis_us:.2f} worker_us={worker_us:.2f} "
          f"lost={sum(int(g[1]) for g in got)} duplicates={sum(int(g[2]) for g in got)} "
          f"peak_rss_mb={max(float(g[3]) for g in got):.1f} library_cpu_us={lib_cpu:.2f} worker_x_library_cpu={worker_us / lib_cpu:.2f}")
PY

# The latency rows: medians over the rounds, per variant and rate.
if [ -s "$out/latency" ]; then python3 - "$out/latency" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    words = line.split()
    fields = dict(w.split("=", 1) for w in words[2:] if "=" in w)
    fields["worker_cpu_pct"], fields["redis_cpu_pct"] = words[-2], words[-1]
    runs.setdefault((words[0], float(words[1])), []).append(fields)
for (variant, rate), got in runs.items():
    med = lambda k: statistics.median(float(g[k]) for g in got)
    missing = sum(int(g["missing_requests"]) + int(g["missing_outcomes"]) for g in got)
    print(f"swiftpush-worker-latency variant={variant} rate={rate:g} request_p50_ms={med('request_p50_ms'):.2f} "
          f"request_p99_ms={med('request_p99_ms'):.2f} outcome_p50_ms={med('outcome_p50_ms'):.2f} "
          f"outcome_p99_ms={med('outcome_p99_ms'):.2f} worker_cpu_pct={med('worker_cpu_pct'):.1f} "
          f"redis_cpu_pct={med('redis_cpu_pct'):.1f} missing={missing}")
PY
fi

# The fast-lane row: medians over the rounds, per variant.
if [ -s "$out/fast" ]; then python3 - "$out/fast" "$fast_backlog" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    words = line.split()
    fields = dict(w.split("=", 1) for w in words[4:] if "=" in w)
    fields["alone"], fields["beside"], fields["left"] = words[1], words[2], words[3]
    runs.setdefault(words[0], []).append(fields)
for variant, got in runs.items():
    med = lambda k: statistics.median(float(g[k]) for g in got)
    missing = sum(int(g["missing_requests"]) + int(g["missing_outcomes"]) for g in got)
    print(f"swiftpush-worker-fastlane variant={variant} backlog={sys.argv[2]} rate_alone={med('alone'):.0f} "
          f"rate_beside={med('beside'):.0f} rate_drop_pct={100 * (1 - med('beside') / max(med('alone'), 1)):.1f} "
          f"request_p50_ms={med('request_p50_ms'):.2f} request_p99_ms={med('request_p99_ms'):.2f} "
          f"outcome_p50_ms={med('outcome_p50_ms'):.2f} outcome_p99_ms={med('outcome_p99_ms'):.2f} "
          f"left_at_end={min(int(g['left']) for g in got)} missing={missing}")
PY
fi

# The throttle row: medians over the rounds, per variant (the 10 s maximum: the largest).
if [ -s "$out/throttle" ]; then python3 - "$out/throttle" "$throttle_rate" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    w = line.split()
    runs.setdefault(w[0], []).append(w[1:])
limit = float(sys.argv[2])
for variant, got in runs.items():
    med = lambda k: statistics.median(float(g[k]) for g in got)
    max10 = max(float(g[4]) for g in got)
    print(f"swiftpush-worker-throttle variant={variant} rate_limit={limit:g} throttled_rate={med(3):.1f} "
          f"max_10s_rate={max10:.1f} max_10s_pct_of_limit={100 * max10 / limit:.1f} max_1s={max(int(g[5]) for g in got)} "
          f"unthrottled_alone={med(0):.0f} unthrottled_beside={med(2):.0f} missing={sum(int(g[1]) + int(g[6]) for g in got)}")
PY
fi
