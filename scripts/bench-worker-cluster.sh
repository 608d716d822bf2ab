#!/usr/bin/env bash
# make bench-worker-cluster: what WAIT costs the worker on a Redis Cluster (issue 22 item 3).
#   scripts/bench-worker-cluster.sh RELEASE_DIR PKI_DIR
# A 3-master + 3-replica cluster on loopback (Tests/support/redis-cluster.sh, plain TCP), the
# mock, and one worker serving 6 shards. For each kind of entry (BENCH_TOKENS, default "1 b500
# 500": single entries, batch entries of 500, multicast entries of 500 tokens) and each round
# (BENCH_RUNS, default 3), BENCH_COUNT notifications (default 100,000) are enqueued over the 6
# shards, then drained by the worker without WAIT and with "wait_replicas": 1, one after the
# other (the two variants interleave, so they share the machine's state). Printed per drain: the
# rate (worker start to the last shard drained), the worker's CPU per notification and the
# cluster's (all six redis-server processes, the enqueue excluded). Last lines, medians:
#   swiftpush-worker-cluster-bench tokens_per_entry=T wait=W rate=R worker_us=U redis_us=U
# and the ratio of the rates with and without WAIT per kind. Redis, the mock and the worker
# share this machine's cores: read the ratios, not the rates.
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(cd "${1:?usage: bench-worker-cluster.sh RELEASE_DIR PKI_DIR}" && pwd)
pki=$(cd "${2:?}" && pwd)
count=${BENCH_COUNT:-100000}
kinds=${BENCH_TOKENS:-1 b500 500}
runs=${BENCH_RUNS:-3}
cli=$build/swiftpush-cli
source scripts/mock-ctl.sh
mock_workspace
WORKER=""
trap '[ -n "$WORKER" ] && kill -9 "$WORKER" 2>/dev/null; bash Tests/support/redis-cluster.sh stop "$out/cluster" 2>/dev/null; mock_stop_all; rm -rf "$out"' EXIT

bash Tests/support/redis-cluster.sh start "$out/cluster" --owner $$
nodes=$(cat "$out/cluster/nodes")
ccli() { $(cat "$out/cluster/cli") "$@" 2>/dev/null; }
mock_start bench "$cli" "$pki" --lenient-initial-limit
port=$MOCK_PORT

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
cluster_ticks() { local t=0 p; while read -r p; do t=$((t + $(cpu_ticks "$p"))); done < "$out/cluster/pids"; echo "$t"; }
hz=$(getconf CLK_TCK)
per_note() { python3 -c "import sys; print(f'{int(sys.argv[1]) * 1e6 / int(sys.argv[2]) / int(sys.argv[3]):.2f}')" "$1" "$hz" "$count"; }
now_ms() { date +%s%3N; }

python3 - "$count" "$out/entries.jsonl" "$out/tokens.txt" "$out/payload.json" <<'PY'
import json, sys
n = int(sys.argv[1])
pad = "x" * 120
with open(sys.argv[2], "w") as f:
    for i in range(n):
        print(json.dumps({"id": f"b-{i}", "app": "bench", "token": "ff%062x" % (i % 10007 + 1),
                          "payload": {"aps": {"alert": "Hello from swiftpush"}, "pad": pad}}), file=f)
open(sys.argv[3], "w").write("".join("ff%062x\n" % (i % 10007 + 1) for i in range(n)))
open(sys.argv[4], "w").write(json.dumps({"aps": {"alert": "Hello from swiftpush"}, "pad": pad}))
PY

enqueue() { # KIND: the notifications over 6 shards as single entries (1), batch entries (bN) or multicast entries (N)
  local opts=(--cluster "$nodes" --shards 6 --quiet)
  if [ "${1#b}" != "$1" ]; then "$cli" enqueue "${opts[@]}" --file "$out/entries.jsonl" --batch "${1#b}" > /dev/null
  elif [ "$1" -eq 1 ]; then "$cli" enqueue "${opts[@]}" --batch 1 --file "$out/entries.jsonl" > /dev/null
  else "$cli" enqueue "${opts[@]}" --tokens "$out/tokens.txt" --payload "@$out/payload.json" --id b --app bench --per-entry "$1" > /dev/null; fi
}
master_port() { local m; m=$(bash Tests/support/redis-cluster.sh master-of "$out/cluster" "push:{$1}") && echo "${m##*:}"; }
drained() {
  local s
  for s in 0 1 2 3 4 5; do
    [ "$(ccli -p "${masters[$s]}" EVAL "$STREAM_DRAINED_LUA" 2 "push:{$s}" "delayed:{$s}" senders)" = 1 ] || return 1
  done
}
flush() { local p; for p in "${masters[@]}"; do ccli -p "$p" FLUSHALL > /dev/null; done; }
masters=()
for s in 0 1 2 3 4 5; do masters[$s]=$(master_port "$s"); done

drain() { # KIND WAIT ROUND
  local kind=$1 wait=$2
  local waitjson=""
  [ "$wait" -gt 0 ] && waitjson=", \"wait_replicas\": $wait, \"wait_timeout_ms\": 1000"
  cat > "$out/w.json" <<JSON
{"redis": {"nodes": [$(sed 's/[^,]*/"&"/g' <<<"$nodes")] $waitjson}, "shards": ["0", "1", "2", "3", "4", "5"],
 "max_in_flight": 2000, "batch": 1000,
 "apps": {"bench": {"key_file": "$pki/AuthKey_TESTKEY001.p8", "key_id": "TESTKEY001", "team_id": "TEAM123456",
                    "host": "localhost", "port": $port, "ca_file": "$pki/ca.pem", "topics": ["com.example.app"], "connections": 1}}}
JSON
  flush
  enqueue "$kind"
  local redis_t0 t0 t1
  redis_t0=$(cluster_ticks)
  t0=$(now_ms)
  "$cli" worker --config "$out/w.json" --consumer w1 --quiet 2> "$out/w1.err" &
  WORKER=$!
  until drained; do
    kill -0 "$WORKER" 2>/dev/null || { cat "$out/w1.err"; echo "the worker died"; exit 1; }
    sleep 0.05
  done
  t1=$(now_ms)
  local worker_ticks redis_ticks
  worker_ticks=$(cpu_ticks "$WORKER"); redis_ticks=$(( $(cluster_ticks) - redis_t0 ))
  kill -TERM "$WORKER"; wait "$WORKER" || { echo "the worker did not stop cleanly"; exit 1; }
  WORKER=""
  local rate; rate=$(( count * 1000 / (t1 - t0) ))
  echo "$kind wait=$wait round $3: $rate notifications/s, CPU-us per notification: worker $(per_note "$worker_ticks"), cluster $(per_note "$redis_ticks")"
  echo "$kind $wait $rate $(per_note "$worker_ticks") $(per_note "$redis_ticks")" >> "$out/results"
}

for round in $(seq 1 "$runs"); do
  for kind in $kinds; do
    drain "$kind" 0 "$round"
    drain "$kind" 1 "$round"
  done
done

python3 - "$out/results" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    kind, wait, rate, worker_us, redis_us = line.split()
    runs.setdefault((kind, int(wait)), []).append((float(rate), float(worker_us), float(redis_us)))
for (kind, wait), got in runs.items():
    shape = f"tokens_per_entry=1 batch={kind[1:]}" if kind.startswith("b") else f"tokens_per_entry={kind}"
    print(f"swiftpush-worker-cluster-bench {shape} wait={wait} rate={statistics.median(g[0] for g in got):.0f} "
          f"worker_us={statistics.median(g[1] for g in got):.2f} redis_us={statistics.median(g[2] for g in got):.2f}")
for kind in dict.fromkeys(k for k, _ in runs):
    a = statistics.median(g[0] for g in runs[(kind, 0)])
    b = statistics.median(g[0] for g in runs[(kind, 1)])
    print(f"{kind}: with WAIT 1 the rate is {b / a:.3f} x the rate without")
PY
