#!/usr/bin/env bash
# The worker on a real Redis Cluster through a failover (issue 22 item 3): 3 masters + 3
# replicas on loopback (Tests/support/redis-cluster.sh; TLS between everyone, one ACL user),
# COUNT notifications spread over 6 shards by id (single entries, batch entries of 100 and
# multicast entries of 500 tokens, a third each), 2 workers each serving all 6 shards, and
# mid-run the master of shard 0 SIGKILLed: its replica takes over, and the old master comes
# back as the new one's replica. Twice:
#   wait    producer and workers confirm their writes with WAIT 1 (wait_replicas): nothing is
#           lost and every notification has exactly one outcome;
#   nowait  neither does: the same must hold for everything the producer wrote before the kill
#           (all of it replicated: the test waits for the replicas before the workers start).
#           What a failover can lose without WAIT is only what a producer wrote in the master's
#           last moments (docs/worker.md, "Redis Cluster"): the worker's writes a failover takes
#           back are written again (their notifications sent again), never lost. On loopback a
#           replica is never far enough behind for a failover to take anything back (a frozen
#           one still finds the master's last writes in its socket's buffer when it wakes), so
#           Tests/worker/run.sh's `rollback` test takes Redis back to an older snapshot instead.
# usage: Tests/worker/cluster.sh BUILD_DIR [COUNT]      (COUNT default 100000)
#        CLUSTER_PHASES="wait nowait cancel" picks the phases (cancel: a campaign cancelled on the
#        cluster mid-run, issue 32; `phase_cancel` below).
# Prints one line per phase, with the run's figures (time, duplicates at the mock, reconnects),
# and "worker-cluster: N passed, N failed"; exits non-zero if any failed. Every wait is on a
# condition, bounded in time.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=$(cd "${1:?usage: cluster.sh BUILD_DIR [COUNT]}" && pwd)
count=${2:-100000}
phases=${CLUSTER_PHASES:-wait nowait cancel}
cli=$build/swiftpush-cli
source scripts/mock-ctl.sh
test_pki
mock_workspace

WORKER_PIDS=()
cleanup() {
  for pid in "${WORKER_PIDS[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
  bash Tests/support/redis-cluster.sh stop "$out/cluster" 2>/dev/null || true
  mock_stop_all
  rm -rf "${MOCK_CLEANUP_DIRS[@]}"
}
trap cleanup EXIT

wait_until() { # SECONDS COMMAND...: polls COMMAND every 0.1 s until it succeeds; fails after SECONDS.
  local limit=$1; shift
  local end=$((SECONDS + limit))
  until "$@"; do
    [ "$SECONDS" -lt "$end" ] || return 1
    sleep 0.1 # polling: a cluster and a queue announce their progress to nobody
  done
}
now_ms() { date +%s%3N; }

password="cluster-secret-$$"
printf '%s\n' "$password" > "$out/password"
bash Tests/support/redis-cluster.sh start "$out/cluster" --tls "$pki" --auth sender "$password" --owner $$ \
  || { echo "FAILED: the cluster did not start"; exit 1; }
nodes=$(cat "$out/cluster/nodes")
ccli() { $(cat "$out/cluster/cli") "$@" 2>/dev/null; }
redis_opts=(--cluster "$nodes" --redis-user sender --redis-password-file "$out/password" --redis-ca-file "$pki/ca.pem")

mock_start cluster "$cli" "$pki" --record --control-port-file "$out/control.port" --lenient-initial-limit
mock_port=$MOCK_PORT
wait_until 10 test -s "$out/control.port"
control=http://127.0.0.1:$(cat "$out/control.port")

pass=0; fail=0
ok() { echo "ok: $1"; pass=$((pass + 1)); }
bad() { echo "FAILED: $1"; for f in "$out"/*.err; do [ -s "$f" ] && { echo "  $f:"; tail -n 5 "$f" | sed 's/^/    /'; }; done; fail=$((fail + 1)); }

shards=(0 1 2 3 4 5)
# config FILE WAIT: a worker serving all 6 shards of the cluster, writes confirmed by WAIT WAIT (0: none).
config() {
  local wait=""
  [ "$2" -gt 0 ] && wait=", \"wait_replicas\": $2, \"wait_timeout_ms\": 1000"
  cat > "$1" <<JSON
{"redis": {"nodes": [$(sed 's/[^,]*/"&"/g' <<<"$nodes")], "username": "sender", "password_file": "$out/password",
           "tls": {"ca_file": "$pki/ca.pem"} $wait},
 "shards": ["0", "1", "2", "3", "4", "5"], "reclaim_interval_ms": 500, "metrics_port": 0, "max_in_flight": 3000,
 "apps": {"demo": {"key_file": "$pki/AuthKey_TESTKEY001.p8", "key_id": "TESTKEY001", "team_id": "TEAM123456",
                   "host": "localhost", "port": $mock_port, "ca_file": "$pki/ca.pem", "topics": ["com.example.app"]}}}
JSON
}
start_worker() { # NAME CONFIG: sets WORKER_PID
  "$cli" worker --config "$2" --consumer "$1" > "$out/$1.out" 2>> "$out/$1.err" &
  WORKER_PID=$!
  WORKER_PIDS+=("$WORKER_PID")
}
stop_worker() { # PID: SIGTERM, then its exit status (99: still running after 60 s)
  kill -TERM "$1"
  local status=0
  wait_until 60 sh -c "! kill -0 $1 2>/dev/null" || { kill -9 "$1"; return 99; }
  wait "$1" || status=$?
  return "$status"
}
# master_port SHARD: the port of the live master serving push:{SHARD}.
master_port() { local m; m=$(bash Tests/support/redis-cluster.sh master-of "$out/cluster" "push:{$1}") && echo "${m##*:}"; }
# done_count: notifications with a recorded outcome, over the 6 shards (the settle script's counters, on each shard's master).
done_count() {
  local s total=0 n port
  for s in "${shards[@]}"; do
    port=$(master_port "$s") || return 1
    for k in accepted rejected failed; do
      n=$(ccli -p "$port" HGET "stats:{$s}" "$k"); total=$((total + ${n:-0}))
    done
  done
  echo "$total"
}
# recorded: outcomes recorded so far by both workers (their /metrics: cheap enough to poll often).
recorded() {
  local w url total=0 n
  for w in c1 c2; do
    url=$(sed -n 's|.* metrics=\(http://[0-9.:]*\)/metrics.*|\1|p' "$out/$w.err" | tail -n 1)
    [ -n "$url" ] || { echo 0; return; }
    n=$(curl -s "$url/metrics" | awk '/^swiftpush_worker_outcomes_total/ { s += $NF } END { printf "%d", s }')
    total=$((total + ${n:-0}))
  done
  echo "$total"
}
at_least_recorded() { [ "$(recorded)" -ge "$1" ]; }
# drained: every shard's group has read and acknowledged everything, nothing delayed (on its master).
drained() {
  local s port
  for s in "${shards[@]}"; do
    port=$(master_port "$s") || return 1
    [ "$(ccli -p "$port" EVAL "$STREAM_DRAINED_LUA" 2 "push:{$s}" "delayed:{$s}" senders)" = 1 ] || return 1
  done
}
# replicated: every master's replicas have every write it made so far.
replicated() {
  local p info
  for p in $(cat "$out/cluster/ports"); do
    info=$(ccli -p "$p" INFO replication | tr -d '\r') || continue
    grep -q '^role:master$' <<<"$info" || continue
    local offset; offset=$(sed -n 's/^master_repl_offset://p' <<<"$info")
    grep -q "^slave0:.*offset=$offset," <<<"$info" || return 1
  done
}
flush_masters() {
  local p
  for p in $(cat "$out/cluster/ports"); do
    ccli -p "$p" ROLE | head -1 | grep -qx master && ccli -p "$p" FLUSHALL > /dev/null
  done
  return 0
}

# The workload: COUNT notifications, a third single entries, a third in batch entries of 100,
# a third in multicast entries of 500 tokens (ids mc#0, mc#1, ...).
singles=$((count / 3)); batched=$((count / 3)); multi=$((count - singles - batched))
python3 - "$out" "$singles" "$batched" "$multi" <<'PY'
import json, sys
out, singles, batched, multi = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
def line(nid, i):
    return json.dumps({"id": nid, "app": "demo", "token": "ff%062x" % (i % 997 + 1),
                       "payload": {"aps": {"alert": f"notification {nid}"}}})
with open(f"{out}/singles.jsonl", "w") as f:
    for i in range(singles): print(line(f"s-{i}", i), file=f)
with open(f"{out}/batched.jsonl", "w") as f:
    for i in range(batched): print(line(f"b-{i}", i), file=f)
with open(f"{out}/tokens.txt", "w") as f:
    for i in range(multi): print("%064x" % (i + 1), file=f)
PY
cat "$out/singles.jsonl" "$out/batched.jsonl" > "$out/lines.jsonl"

phase() { # NAME WAIT
  local name=$1 wait=$2 waitopt=()
  [ "$wait" -gt 0 ] && waitopt=(--wait-replicas "$wait")
  flush_masters
  curl -s -X POST "$control/record/reset" > /dev/null
  rm -f "$out"/*.err "$out"/*.out
  local label="cluster, $name: $count notifications over 6 shards (singles, batches of 100, multicasts of 500), 2 workers on all 6, the master of shard 0 SIGKILLed mid-run and back as a replica"
  if ! { "$cli" enqueue "${redis_opts[@]}" --shards 6 --batch 1 --file "$out/singles.jsonl" --quiet "${waitopt[@]}" > /dev/null 2>> "$out/enqueue.err" \
         && "$cli" enqueue "${redis_opts[@]}" --shards 6 --batch 100 --file "$out/batched.jsonl" --quiet "${waitopt[@]}" > /dev/null 2>> "$out/enqueue.err" \
         && "$cli" enqueue "${redis_opts[@]}" --shards 6 --tokens "$out/tokens.txt" --per-entry 500 --id mc \
              --payload '{"aps":{"alert":"to many"}}' --app demo --quiet "${waitopt[@]}" > /dev/null 2>> "$out/enqueue.err"; }; then
    bad "$label (enqueue failed)"; return
  fi
  # Everything the producer wrote is on the replicas before anything else happens (so that
  # without WAIT the only writes a failover can take back are the workers').
  wait_until 30 replicated || { bad "$label (replicas never caught up with the producer)"; return; }
  config "$out/$name.json" "$wait"
  local started; started=$(now_ms)
  start_worker c1 "$out/$name.json"; local a=$WORKER_PID
  start_worker c2 "$out/$name.json"; local b=$WORKER_PID
  local victim; victim=$(master_port 0)
  wait_until 300 at_least_recorded $((count / 4)) || { bad "$label (a quarter never got outcomes: $(recorded) recorded)"; return; }
  local killed at_kill; killed=$(now_ms)
  bash Tests/support/redis-cluster.sh kill "$out/cluster" "$victim"
  at_kill=$(recorded)
  bash Tests/support/redis-cluster.sh wait-ok "$out/cluster" 30 || { bad "$label (no failover)"; return; }
  local promoted; promoted=$(now_ms)
  bash Tests/support/redis-cluster.sh restart "$out/cluster" "$victim"
  bash Tests/support/redis-cluster.sh wait-linked "$out/cluster" 60 || { bad "$label (the old master did not come back as a replica)"; return; }
  wait_until 600 drained || { bad "$label (not drained: $(done_count || echo ?) of $count done)"; return; }
  local finished; finished=$(now_ms)
  # The kill must have come mid-run, not after the end.
  [ "$at_kill" -lt $((count * 9 / 10)) ] || { bad "$label (the kill came too late: $at_kill of $count done)"; return; }
  local sa=0 sb=0
  stop_worker "$a" || sa=$?
  stop_worker "$b" || sb=$?
  : > "$out/outcomes.jsonl"
  for s in "${shards[@]}"; do
    "$cli" outcomes "${redis_opts[@]}" --shard "$s" --json >> "$out/outcomes.jsonl" 2>> "$out/outcomes.err" || { bad "$label (outcomes of shard $s unreadable)"; return; }
  done
  # Multicast rows (ids mc#k) to one checker, single and batch rows to the other.
  python3 -c '
import json, sys
mc, rest = open(sys.argv[2], "w"), open(sys.argv[3], "w")
for line in open(sys.argv[1]):
    (mc if json.loads(line)["id"].startswith("mc#") else rest).write(line)' "$out/outcomes.jsonl" "$out/mc.jsonl" "$out/lines.outcomes.jsonl"
  : > "$out/none.jsonl"
  local c1 c2
  c1=$(python3 Tests/worker/check_outcomes.py "$out/lines.jsonl" "$out/lines.outcomes.jsonl" 2>&1) || { bad "$label (exit $sa/$sb; $c1)"; return; }
  c2=$(python3 Tests/worker/check_multicast.py "$out/tokens.txt" 500 mc "$out/mc.jsonl" "$out/none.jsonl" "" 2>&1) || { bad "$label (exit $sa/$sb; $c2)"; return; }
  curl -s "$control/record" > "$out/record.json"
  local dups; dups=$(python3 -c '
import collections, json, sys
ids = collections.Counter(r["apns_id"] for r in json.load(open(sys.argv[1])))
print(sum(c - 1 for c in ids.values() if c > 1))' "$out/record.json")
  local reconnects shorts
  reconnects=$(cat "$out/c1.err" "$out/c2.err" | grep -c "connected to Redis again" || true)
  shorts=$(cat "$out/c1.err" "$out/c2.err" | grep -c "settled short" || true)
  if [ "$sa" -eq 0 ] && [ "$sb" -eq 0 ]; then
    ok "$label: $c1; $c2; $at_kill done at the kill, promoted after $((promoted - killed)) ms, drained $((finished - started)) ms after the workers started; $dups duplicate sends at the mock, $reconnects reconnects, $shorts short settles"
  else
    bad "$label (worker exit $sa/$sb)"
  fi
}

# cancel (issue 32): a campaign of 6,000 notifications over the 6 shards (batch entries of 50)
# cancelled by `swiftpush campaign cancel` once a tenth has outcomes, the APNs mock answering 5
# ms late on 5 streams: every id exactly one outcome (ACCEPTED, or REJECTED Cancelled and never
# sent), the Cancelled ones counted in every shard's stats.
phase_cancel() {
  local label="cluster, cancel: a campaign of 6000 notifications over 6 shards, 2 workers, cancelled mid-way: one outcome per id, the rest REJECTED Cancelled unsent and counted"
  flush_masters
  rm -f "$out"/*.err "$out"/*.out
  mock_start cancel "$cli" "$pki" --delay-ms 5 --max-streams 5 --record --control-port-file "$out/cancel.port" --lenient-initial-limit
  local port=$MOCK_PORT
  wait_until 10 test -s "$out/cancel.port"
  local cancel_control=http://127.0.0.1:$(cat "$out/cancel.port")
  python3 -c '
import json
for i in range(6000):
    print(json.dumps({"id": f"sale-{i}", "app": "demo", "token": "cc%062x" % (i + 1), "payload": {"aps": {"alert": "sale"}}}))' > "$out/sale.jsonl"
  "$cli" enqueue "${redis_opts[@]}" --shards 6 --batch 50 --campaign sale --file "$out/sale.jsonl" --quiet > /dev/null 2>> "$out/enqueue.err" \
    || { bad "$label (enqueue failed)"; return; }
  config "$out/cancel.json" 0
  sed -i "s/\"port\": $mock_port,/\"port\": $port,/; s/\"max_in_flight\": 3000/\"max_in_flight\": 100/" "$out/cancel.json"
  start_worker c1 "$out/cancel.json"; local a=$WORKER_PID
  start_worker c2 "$out/cancel.json"; local b=$WORKER_PID
  wait_until 120 at_least_recorded 600 || { bad "$label (a tenth never got outcomes: $(recorded) recorded)"; return; }
  local cs=0; "$cli" campaign cancel sale "${redis_opts[@]}" > "$out/cancel.out" 2>&1 || cs=$?
  wait_until 120 drained || { bad "$label (not drained after the cancel: $(done_count || echo ?) done)"; return; }
  local sa=0 sb=0
  stop_worker "$a" || sa=$?
  stop_worker "$b" || sb=$?
  : > "$out/outcomes.jsonl"
  local s stat=0 n
  for s in "${shards[@]}"; do
    "$cli" outcomes "${redis_opts[@]}" --shard "$s" --json >> "$out/outcomes.jsonl" 2>> "$out/outcomes.err" || { bad "$label (outcomes of shard $s unreadable)"; return; }
    n=$(ccli -p "$(master_port "$s")" HGET "stats:{$s}" campaign:sale:reason:Cancelled); stat=$((stat + ${n:-0}))
  done
  curl -s "$cancel_control/record" > "$out/cancel.record"
  local summary
  summary=$(python3 - "$out/outcomes.jsonl" "$out/cancel.record" "$stat" <<'PY' 2>&1
import json, sys, uuid
outs, rec, stat = sys.argv[1], sys.argv[2], int(sys.argv[3])
seen, cancelled, accepted = {}, set(), 0
for line in open(outs):
    o = json.loads(line)
    seen[o["id"]] = seen.get(o["id"], 0) + 1
    if o["outcome"] == "REJECTED" and o["reason"] == "Cancelled": cancelled.add(o["id"])
    elif o["outcome"] == "ACCEPTED": accepted += 1
    else: raise SystemExit(f"unexpected outcome {o}")
assert set(seen) == {f"sale-{i}" for i in range(6000)}, f"{len(seen)} ids with outcomes"
assert all(n == 1 for n in seen.values()), "an id with more than one outcome"
assert cancelled and stat == len(cancelled), f"stats {stat}, Cancelled outcomes {len(cancelled)}"
ns = uuid.UUID("5b0f3f1e-8c53-4b8e-9d6a-2f1c7a4e9b30")
received = {r["apns_id"].lower() for r in json.load(open(rec))}
sent = [i for i in cancelled if str(uuid.uuid5(ns, i)) in received]
assert not sent, f"{len(sent)} cancelled notifications were sent"
print(f"{accepted} accepted, {len(cancelled)} cancelled, none of them sent")
PY
) || { bad "$label (cancel exit $cs: $(cat "$out/cancel.out"); $summary)"; return; }
  if [ "$cs" -eq 0 ] && [ "$sa" -eq 0 ] && [ "$sb" -eq 0 ]; then ok "$label: $summary"
  else bad "$label (cancel exit $cs, worker exit $sa/$sb: $summary)"; fi
}

for p in $phases; do
  case $p in
    wait) phase wait 1 ;;
    nowait) phase nowait 0 ;;
    cancel) phase_cancel ;;
    *) echo "unknown phase $p"; exit 2 ;;
  esac
done
echo "worker-cluster: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
