#!/usr/bin/env bash
# make bench-worker: the queue-fed worker's end-to-end rate against the raw library rate.
#   scripts/bench-worker.sh RELEASE_DIR PKI_DIR   (BENCH_COUNT entries, default 200,000)
# N entries are enqueued first; then 1 worker, then 2 workers (a fresh shard each) drain them
# to the mock; the rate is from the worker's start to the last outcome recorded (measured on
# the outcomes stream's own ids, which are Redis's millisecond clock). The raw library rate is
# load.c (Bindings/c/examples) against the same mock in the same run. Redis (AOF, everysec),
# the mock and the workers share this machine's cores. Last line:
#   swiftpush-worker-bench workers=W rate=R library_rate=L ratio=R/L lost=0 duplicates=D peak_rss_mb=M
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(cd "${1:?usage: bench-worker.sh RELEASE_DIR PKI_DIR}" && pwd)
pki=$(cd "${2:?}" && pwd)
count=${BENCH_COUNT:-200000}
cli=$build/swiftpush-cli
source scripts/mock-ctl.sh
mock_workspace
REDIS_PID=""
trap 'for p in ${WORKERS:-}; do kill -9 "$p" 2>/dev/null || true; done; [ -n "$REDIS_PID" ] && kill "$REDIS_PID" 2>/dev/null; mock_stop_all; rm -rf "$out"' EXIT

redis_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mkdir -p "$out/redis"
redis-server --port "$redis_port" --bind 127.0.0.1 --dir "$out/redis" --appendonly yes --appendfsync everysec \
  --save "" > "$out/redis.log" 2>&1 &
REDIS_PID=$!
for _ in $(seq 1 100); do redis-cli -p "$redis_port" ping 2>/dev/null | grep -q PONG && break; sleep 0.1; done
mock_start bench "$cli" "$pki" --lenient-initial-limit
port=$MOCK_PORT

# utime + stime of a process, in clock ticks.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

build_load "$build" "$out/load"
"$out/load" --host localhost --port "$port" --ca "$pki/ca.pem" --key "$pki/AuthKey_TESTKEY001.p8" \
  --key-id TESTKEY001 --team-id TEAM123456 --topic com.example.app --count "$count" --window 10000 --quiet > "$out/load.txt" 2>&1
library_rate=$(sed -E -n 's/^load-result.* rate=([0-9.]+).*/\1/p' "$out/load.txt")
echo "library (load.c, 1 connection, window 10000): $library_rate notifications/s"

python3 - "$count" > "$out/entries.jsonl" <<'PY'
import json, sys
pad = "x" * 120
for i in range(int(sys.argv[1])):
    print(json.dumps({"id": f"b-{i}", "app": "bench", "token": "ff%062x" % (i % 10007 + 1),
                      "payload": {"aps": {"alert": "Hello from swiftpush"}, "pad": pad}}))
PY

for workers in 1 2; do
  shard=bench$workers
  cat > "$out/$shard.json" <<JSON
{"redis": {"host": "127.0.0.1", "port": $redis_port}, "shard": "$shard", "max_in_flight": 10000, "batch": 1000,
 "apps": {"bench": {"key_file": "$pki/AuthKey_TESTKEY001.p8", "key_id": "TESTKEY001", "team_id": "TEAM123456",
                    "host": "localhost", "port": $port, "ca_file": "$pki/ca.pem", "topics": ["com.example.app"],
                    "connections": 1}}}
JSON
  "$cli" enqueue --redis "127.0.0.1:$redis_port" --shard "$shard" --file "$out/entries.jsonl" > /dev/null
  redis_t0=$(cpu_ticks "$REDIS_PID"); mock_t0=$(cpu_ticks "$MOCK_PID")
  start_ms=$(redis-cli -p "$redis_port" TIME | python3 -c 'import sys; s, us = sys.stdin.read().split(); print(int(s) * 1000 + int(us) // 1000)')
  WORKERS=""
  for w in $(seq 1 "$workers"); do
    ${WORKER_RUNNER:-} "$cli" worker --config "$out/$shard.json" --consumer "w$w" --quiet 2> "$out/w$w.err" &
    WORKERS="$WORKERS $!"
  done
  until [ "$(redis-cli -p "$redis_port" XLEN "outcomes:{$shard}")" -ge "$count" ]; do
    for p in $WORKERS; do kill -0 "$p" 2>/dev/null || { cat "$out"/w*.err; echo "a worker died"; exit 1; }; done
    sleep 0.05
  done
  rss=0; worker_ticks=0
  for p in $WORKERS; do
    r=$(awk '/VmHWM/ {print $2}' "/proc/$p/status"); [ "$r" -gt "$rss" ] && rss=$r
    worker_ticks=$((worker_ticks + $(cpu_ticks "$p")))
    kill -TERM "$p"
  done
  redis_ticks=$(( $(cpu_ticks "$REDIS_PID") - redis_t0 )); mock_ticks=$(( $(cpu_ticks "$MOCK_PID") - mock_t0 ))
  hz=$(getconf CLK_TCK)
  echo "CPU-us per notification: worker(s) $((worker_ticks * 1000000 / hz / count)), redis $((redis_ticks * 1000000 / hz / count)), mock $((mock_ticks * 1000000 / hz / count))"
  for p in $WORKERS; do wait "$p"; done
  last_ms=$(redis-cli -p "$redis_port" XREVRANGE "outcomes:{$shard}" + - COUNT 1 | head -1 | cut -d- -f1)
  "$cli" outcomes --redis "127.0.0.1:$redis_port" --shard "$shard" --json > "$out/$shard.outcomes"
  read -r lost duplicates <<< "$(python3 - "$out/$shard.outcomes" "$count" <<'PY'
import json, sys
ids = [json.loads(l)["id"] for l in open(sys.argv[1])]
print(int(sys.argv[2]) - len(set(ids)), len(ids) - len(set(ids)))
PY
)"
  python3 - "$workers" "$count" "$start_ms" "$last_ms" "$library_rate" "$lost" "$duplicates" "$rss" <<'PY'
import sys
w, n, t0, t1, lib, lost, dup, rss = sys.argv[1:]
rate = int(n) / ((int(t1) - int(t0)) / 1000)
print(f"{w} worker(s): {n} notifications in {(int(t1) - int(t0)) / 1000:.2f} s")
print(f"swiftpush-worker-bench workers={w} rate={rate:.0f} library_rate={float(lib):.0f} "
      f"ratio={rate / float(lib):.3f} lost={lost} duplicates={dup} peak_rss_mb={int(rss) / 1024:.1f}")
PY
done
