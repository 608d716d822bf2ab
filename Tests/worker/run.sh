#!/usr/bin/env bash
# End-to-end tests of `swiftpush worker` (issue 15): a real redis-server on a free loopback port
# (AOF on), the project's mock APNs server (TLS + HTTP/2), the CLI's enqueue and outcomes.
# usage: Tests/worker/run.sh BUILD_DIR [COUNT]   (COUNT: entries of the end-to-end test, 100000)
#        WORKER_TESTS="name ..." runs only those tests (the names are at the end of this file)
# Prints one line per test and "worker: N passed, N failed"; exits non-zero if any failed.
# Every wait is on a condition (with a time limit), never a bare sleep.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=$(cd "${1:?usage: run.sh BUILD_DIR [COUNT]}" && pwd)
count=${2:-100000}
cli=$build/swiftpush-cli
source scripts/mock-ctl.sh
test_pki
mock_workspace

WORKER_PIDS=()
REDIS_PID=""
cleanup() {
  for pid in "${WORKER_PIDS[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
  [ -n "$REDIS_PID" ] && kill "$REDIS_PID" 2>/dev/null || true
  mock_stop_all
  rm -rf "${MOCK_CLEANUP_DIRS[@]}"
}
trap cleanup EXIT

# wait_until SECONDS COMMAND...: polls COMMAND every 0.1 s until it succeeds; fails after SECONDS.
wait_until() {
  local limit=$1; shift
  local end=$((SECONDS + limit))
  until "$@"; do
    [ "$SECONDS" -lt "$end" ] || return 1
    sleep 0.1
  done
}

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
rcli() { redis-cli -p "$redis_port" "$@"; }

# A Redis of our own: loopback only, AOF with fsync on every write (nothing acknowledged is lost).
redis_port=$(free_port)
mkdir -p "$out/redis"
# start_redis: (re)starts it on the same port and directory (a restart loads the AOF); true once it answers.
start_redis() {
  redis-server --port "$redis_port" --bind 127.0.0.1 --dir "$out/redis" --appendonly yes --appendfsync always \
    --save "" --protected-mode yes >> "$out/redis.log" 2>&1 &
  REDIS_PID=$!
  wait_until 30 sh -c "redis-cli -p $redis_port ping 2>/dev/null | grep -q PONG"
}
# restart_redis: SIGKILL, then a restart from the AOF.
restart_redis() {
  kill -9 "$REDIS_PID"; wait "$REDIS_PID" 2>/dev/null || true
  start_redis
}
start_redis || { cat "$out/redis.log"; echo "redis did not start"; exit 1; }

# The mock: three tokens are unregistered (410), every request is recorded (duplicate check).
gone1=00000000000000000000000000000000000000000000000000000000000000a1
gone2=00000000000000000000000000000000000000000000000000000000000000a2
gone3=00000000000000000000000000000000000000000000000000000000000000a3
mock_start worker "$cli" "$pki" --unregistered "$gone1" --unregistered "$gone2" --unregistered "$gone3" \
  --record --control-port-file "$out/control.port" --lenient-initial-limit
mock_port=$MOCK_PORT
wait_until 10 test -s "$out/control.port"
control=http://127.0.0.1:$(cat "$out/control.port")
# A slow mock (every answer 300 ms late, no token gone), so that SIGTERM finds notifications in flight.
mock_start slow "$cli" "$pki" --delay-ms 300 --lenient-initial-limit
slow_port=$MOCK_PORT

pass=0; fail=0
ok() { echo "ok: $1"; pass=$((pass + 1)); }
bad() { echo "FAILED: $1"; for f in "$out"/*.err; do [ -s "$f" ] && { echo "  $f:"; tail -n 5 "$f" | sed 's/^/    /'; }; done; fail=$((fail + 1)); }

# config FILE SHARD PORT [extra JSON members]: a worker configuration for app "demo" on a mock.
config() {
  local file=$1 shard=$2 port=$3 extra=${4:-}
  cat > "$file" <<JSON
{"redis": {"host": "127.0.0.1", "port": $redis_port}, "shard": "$shard", "reclaim_interval_ms": 500 $extra,
 "apps": {"demo": {"key_file": "$pki/AuthKey_TESTKEY001.p8", "key_id": "TESTKEY001", "team_id": "TEAM123456",
                   "host": "localhost", "port": $port, "ca_file": "$pki/ca.pem", "topics": ["com.example.app"]},
          "wrongkey": {"key_file": "$pki/AuthKey_WRONGKEY01.p8", "key_id": "TESTKEY001", "team_id": "TEAM123456",
                   "host": "localhost", "port": $port, "ca_file": "$pki/ca.pem", "topics": ["com.example.app"]}}}
JSON
}

# start_worker NAME CONFIG: starts a worker with consumer NAME; sets WORKER_PID.
start_worker() {
  "$cli" worker --config "$2" --consumer "$1" > "$out/$1.out" 2>> "$out/$1.err" &
  WORKER_PID=$!
  WORKER_PIDS+=("$WORKER_PID")
}
# stop_worker PID: SIGTERM, then waits (30 s at most) and returns its exit status.
stop_worker() {
  kill -TERM "$1"
  local status=0
  wait_until 30 sh -c "! kill -0 $1 2>/dev/null" || { kill -9 "$1"; return 99; }
  wait "$1" || status=$?
  return "$status"
}
outcome_count() { rcli XLEN "outcomes:{$1}"; }
drained() { stream_drained "$redis_port" "$1"; }
pending_count() { rcli XPENDING "push:{$1}" senders | head -1; }
# metrics_url WORKER: where that worker serves /metrics (from its log).
metrics_url() { sed -n 's|.* metrics=\(http://[0-9.:]*\)/metrics.*|\1|p' "$out/$1.err" | tail -n 1; }
# pending_at_least SHARD N: the group has N entries pending (false before the group exists).
pending_at_least() { [ "$(rcli XPENDING "push:{$1}" senders 2>/dev/null | head -1)" -ge "$2" ] 2>/dev/null; }
# all_delivered SHARD: the group has delivered up to the stream's last entry.
all_delivered() {
  local last
  last=$(rcli XREVRANGE "push:{$1}" + - COUNT 1 | head -1)
  [ -n "$last" ] && [ "$(rcli XINFO GROUPS "push:{$1}" 2>/dev/null | sed -n '/^last-delivered-id$/{n;p}')" = "$last" ]
}
# delayed_retries SHARD: the highest trip count (retries) of the entries waiting in the delayed set (0: none).
delayed_retries() {
  local m top=0 r
  for m in $(rcli ZRANGE "delayed:{$1}" 0 -1); do
    r=$(rcli HGET "delayed:{$1}:$m" retries); [ "${r:-0}" -gt "$top" ] && top=$r
  done
  echo "$top"
}
export -f delayed_retries rcli; export redis_port
has_outcomes() { [ "$(outcome_count "$1")" -ge "$2" ]; }
# notifications SHARD N: N JSON lines (ids SHARD-0...), 1000 tokens of which three are gone.
notifications() {
  python3 - "$1" "$2" "$gone1" "$gone2" "$gone3" <<'PY'
import json, sys
shard, n, gone = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
for i in range(n):
    t = gone[(i // 1000) % 3] if i % 1000 == 999 else "ff%062x" % (i % 997 + 1)
    print(json.dumps({"id": f"{shard}-{i}", "app": "demo", "token": t,
                      "payload": {"aps": {"alert": {"title": "Hello", "body": f"notification {i}"}}}}))
PY
}
gone_tokens="$gone1,$gone2,$gone3"
good=00fc13adff785122b4ad28809a3420982341241421348097878e577c991de8f0
check() {
  "$cli" outcomes --redis "127.0.0.1:$redis_port" --shard "$1" --json > "$out/$1.outcomes"
  "$cli" outcomes --redis "127.0.0.1:$redis_port" --shard "$1" --unregistered --json > "$out/$1.unregistered"
  python3 Tests/worker/check_outcomes.py "$out/$1.jsonl" "$out/$1.outcomes" "$out/$1.unregistered" "${2:-$gone_tokens}"
}

# ---------------------------------------------------------------------------------------------
test_end_to_end() {
name="end to end: $count entries, 2 workers: every id exactly one outcome, nothing pending, the 410 stream exact"
shard=e2e
notifications $shard "$count" > "$out/$shard.jsonl"
config "$out/$shard.json" $shard "$mock_port"
if "$cli" enqueue --batch 1 --redis "127.0.0.1:$redis_port" --shard $shard --file "$out/$shard.jsonl" > "$out/enqueue.out" \
   && grep -q "^enqueued $count notifications in $count entries$" "$out/enqueue.out"; then
  t0=$(date +%s.%N)
  start_worker e2e-a "$out/$shard.json"; a=$WORKER_PID
  start_worker e2e-b "$out/$shard.json"; b=$WORKER_PID
  if wait_until 300 has_outcomes $shard "$count"; then
    t1=$(date +%s.%N)
    sa=0; stop_worker "$a" || sa=$?
    sb=0; stop_worker "$b" || sb=$?
    if [ "$sa" -eq 0 ] && [ "$sb" -eq 0 ] && [ "$(pending_count $shard)" -eq 0 ] && check $shard \
       && grep -q "accepted=[1-9]" "$out/e2e-a.err" && grep -q "accepted=[1-9]" "$out/e2e-b.err"; then
      ok "$name ($(python3 -c "print(f'{$count / ($t1 - $t0):.0f}')") notifications/s end to end, $(basename "$build") build)"
    else bad "$name (exit statuses $sa $sb, pending $(pending_count $shard))"; fi
  else bad "$name (only $(outcome_count $shard) outcomes)"; fi
else bad "$name (enqueue)"; fi
}

# ---------------------------------------------------------------------------------------------
test_outcome_format_2() {
name="outcome format 2: 20000 entries, 2 workers: one outcomes entry per batch, every id exactly one outcome in them, the 410 stream exact"
shard=f2
notifications $shard 20000 > "$out/$shard.jsonl"
config "$out/$shard.json" $shard "$mock_port" ', "outcome_format": 2'
if "$cli" enqueue --batch 1 --redis "127.0.0.1:$redis_port" --shard $shard --file "$out/$shard.jsonl" > /dev/null; then
  start_worker f2-a "$out/$shard.json"; a=$WORKER_PID
  start_worker f2-b "$out/$shard.json"; b=$WORKER_PID
  if wait_until 120 drained $shard; then
    sa=0; stop_worker "$a" || sa=$?
    sb=0; stop_worker "$b" || sb=$?
    # Every stream entry is a batch: v 2, its worker, and a count that matches its array.
    batches=$(python3 - "$redis_port" "outcomes:{$shard}" <<'PY'
import json, subprocess, sys
port, stream = sys.argv[1], sys.argv[2]
raw = subprocess.run(["redis-cli", "-p", port, "--json", "XRANGE", stream, "-", "+"], capture_output=True, text=True).stdout
entries, total = json.loads(raw), 0
for _, flat in entries:
    f = dict(zip(flat[::2], flat[1::2]))
    outcomes = json.loads(f.get("outcomes", "[]"))
    if f.get("v") != "2" or f.get("worker") not in ("f2-a", "f2-b") or f.get("count") != str(len(outcomes)):
        print(f"0 0 not-a-batch: {sorted(f)} v={f.get('v')} count={f.get('count')}")
        sys.exit(0)
    total += len(outcomes)
print(len(entries), total)
PY
)
    read -r nbatches total _ <<< "${batches:-0 0}"
    # Text lines too, one per outcome, and --count counts outcomes, not batches.
    text=$("$cli" outcomes --redis "127.0.0.1:$redis_port" --shard $shard --count 5)
    if [ "$sa" -eq 0 ] && [ "$sb" -eq 0 ] && [ "$total" -eq 20000 ] && [ "$nbatches" -lt 2000 ] && check $shard \
       && [ "$(grep -cE '^f2-[0-9]+ (ACCEPTED 200 -|REJECTED 410 Unregistered) apns-id=[0-9a-f-]{36} entry=[0-9]+-[0-9]+$' <<< "$text")" -eq 5 ]; then
      ok "$name ($nbatches entries for 20000 outcomes)"
    else bad "$name (exit statuses $sa $sb, batches: ${batches:-unreadable})"; fi
  else bad "$name (not drained: pending $(pending_count $shard))"; fi
else bad "$name (enqueue failed)"; fi
}

# ---------------------------------------------------------------------------------------------
test_failed_settle_write() {
# A settle script whose write fails midway (Redis keeps a script's earlier writes): the 410
# stream's key holds a string, so recording a 410 fails with WRONGTYPE until it is deleted.
# Nothing settled before the failure may lose its outcome, nothing may be recorded twice.
for format in 1 2; do
  name="a settle write that fails (outcome format $format, WRONGTYPE on the 410 stream until fixed): every id exactly one outcome, the 410 stream exact"
  shard=broken$format
  notifications $shard 3000 > "$out/$shard.jsonl"
  config "$out/$shard.json" $shard "$mock_port" ", \"outcome_format\": $format"
  rcli SET "unregistered:{$shard}" not-a-stream > /dev/null
  if "$cli" enqueue --batch 1 --redis "127.0.0.1:$redis_port" --shard $shard --file "$out/$shard.jsonl" > /dev/null; then
    start_worker $shard "$out/$shard.json"; w=$WORKER_PID
    if wait_until 60 grep -q WRONGTYPE "$out/$shard.err"; then
      rcli DEL "unregistered:{$shard}" > /dev/null
      if wait_until 120 drained $shard; then
        sw=0; stop_worker "$w" || sw=$?
        if [ "$sw" -eq 0 ] && check $shard; then ok "$name"
        else bad "$name (exit status $sw)"; fi
      else bad "$name (not drained: pending $(pending_count $shard))"; fi
    else bad "$name (the settle never failed)"; fi
  else bad "$name (enqueue failed)"; fi
done
}

# ---------------------------------------------------------------------------------------------
test_crash() {
name="crash: one of 2 workers killed with SIGKILL 3 times mid-run: every id exactly one outcome, its entries reclaimed"
shard=crash
n=$((count / 2))
notifications $shard "$n" > "$out/$shard.jsonl"
# deadline 1 s x 2 sends + 0.5 s back-off = 2.5 s longest delivery; min-idle 4 s exceeds it.
config "$out/$shard.json" $shard "$mock_port" ', "deadline_ms": 1000, "max_sends": 2, "min_idle_ms": 4000, "max_in_flight": 2000'
curl -s -X POST "$control/record/reset" > /dev/null
"$cli" enqueue --batch 1 --redis "127.0.0.1:$redis_port" --shard $shard --file "$out/$shard.jsonl" > /dev/null
start_worker crash-a "$out/$shard.json"; a=$WORKER_PID
start_worker crash-b "$out/$shard.json"; b=$WORKER_PID
kills=0
for fraction in 10 30 50; do
  if wait_until 120 has_outcomes $shard $((n * fraction / 100)); then
    kill -9 "$b"; wait "$b" 2>/dev/null || true
    kills=$((kills + 1))
    pending_at_kill=$(pending_count $shard)
    # What the killed worker held: the survivor must reclaim it after the last kill.
    b_pending=$(rcli XPENDING "push:{$shard}" senders - + 1000000 crash-b | grep -cx crash-b || true)
    # Restarted under the same name twice (it re-reads its own pending entries first); the last
    # time it stays dead, and the other worker must reclaim what it held.
    if [ "$fraction" -lt 50 ]; then start_worker crash-b "$out/$shard.json"; b=$WORKER_PID; fi
  fi
done
if [ "$kills" -eq 3 ] && wait_until 300 has_outcomes $shard "$n" && wait_until 30 sh -c "[ \$(redis-cli -p $redis_port XPENDING 'push:{$shard}' senders | head -1) -eq 0 ]"; then
  sa=0; stop_worker "$a" || sa=$?
  curl -s "$control/record" > "$out/record.json"
  dups=$(python3 -c '
import collections, json, sys
ids = collections.Counter(r["apns_id"] for r in json.load(open(sys.argv[1])))
print(sum(c - 1 for c in ids.values() if c > 1))' "$out/record.json")
  reclaimed=$(sed -n 's/.* reclaimed=\([0-9]*\).*/\1/p' "$out/crash-a.err" | tail -n 1)
  if [ "$sa" -eq 0 ] && check $shard && [ "${reclaimed:-0}" -ge "$b_pending" ]; then
    ok "$name (3 kills, $b_pending pending with the dead worker at the last, $reclaimed reclaimed by the survivor, $dups duplicate sends at the mock)"
  else bad "$name (reclaimed ${reclaimed:-0}, the dead worker held $b_pending)"; fi
else bad "$name (kills $kills, outcomes $(outcome_count $shard), pending $(pending_count $shard))"; fi
}

# ---------------------------------------------------------------------------------------------
test_sigterm() {
name="SIGTERM: stops reading, drains what is in flight, exits 0 with nothing pending; a restart finishes the rest exactly once"
shard=term
n=5000
notifications $shard $n > "$out/$shard.jsonl"
config "$out/$shard.json" $shard "$slow_port" ', "max_in_flight": 1000, "drain_ms": 20000'
"$cli" enqueue --batch 1 --redis "127.0.0.1:$redis_port" --shard $shard --file "$out/$shard.jsonl" > /dev/null
start_worker term-a "$out/$shard.json"; a=$WORKER_PID
if wait_until 60 has_outcomes $shard 1; then
  st=0; stop_worker "$a" || st=$?
  after_stop=$(outcome_count $shard)
  pending=$(pending_count $shard)
  drained=$(sed -n 's/.*msg="stopping: no more reads, draining" in_flight=\([0-9]*\).*/\1/p' "$out/term-a.err" | tail -n 1)
  start_worker term-b "$out/$shard.json"; b=$WORKER_PID
  if [ "$st" -eq 0 ] && [ "$pending" -eq 0 ] && [ "${drained:-0}" -gt 0 ] && [ "$after_stop" -lt "$n" ] \
     && wait_until 120 has_outcomes $shard $n && stop_worker "$b" && check $shard none; then
    ok "$name ($drained in flight at SIGTERM, $after_stop outcomes when it exited)"
  else bad "$name (exit $st, pending $pending, in flight at stop ${drained:-?}, outcomes $after_stop)"; fi
else bad "$name (no outcome)"; fi
}

# ---------------------------------------------------------------------------------------------
# late_mock: a mock answering every request 1.5 s late (started once, for the tests that need
# answers to outlive a worker); sets late_port.
late_port=""
late_mock() {
  [ -n "$late_port" ] && return 0
  mock_start late "$cli" "$pki" --delay-ms 1500 --lenient-initial-limit
  late_port=$MOCK_PORT
}
# idle_ready SHARD MS: how many of the group's pending entries have been idle at least MS
# (what another worker's reclaim may take at once).
idle_ready() { rcli XPENDING "push:{$1}" senders IDLE "$2" - + 1000000 | awk 'NR % 4 == 1' | grep -c . || true; }

test_sigterm_takeback() {
# Issue 31, item 1: a worker restarted after a SIGKILL takes back its pending entries; a
# SIGTERM during that take-back (at once) or right after it (its log line) must finish them
# within drain_ms and exit 0, and one whose drain is too short must hand back what it could not
# finish, so that another worker takes it at once although min_idle_ms is 2 minutes.
late_mock
n=1500
for phase in during after short; do
  name="SIGTERM $phase a take-back of 1,500 own pending entries (answers 1.5 s late): $( [ $phase = short ] && echo 'what the 300 ms drain cannot finish is handed back (exit 1, handed_back=N), another worker takes it at once' || echo 'all finished within drain_ms, exit 0, nothing pending')"
  shard=tb$phase
  drain=8000; [ $phase = short ] && drain=300
  notifications $shard $n > "$out/$shard.jsonl"
  config "$out/$shard.json" $shard "$late_port" ", \"max_in_flight\": 5000, \"drain_ms\": $drain, \"deadline_ms\": 5000, \"max_sends\": 2, \"min_idle_ms\": 120000"
  "$cli" enqueue --batch 1 --redis "127.0.0.1:$redis_port" --shard $shard --file "$out/$shard.jsonl" > /dev/null
  start_worker $shard-a "$out/$shard.json"; a=$WORKER_PID
  if ! wait_until 60 pending_at_least $shard $n; then bad "$name (never held $n)"; continue; fi
  kill -9 "$a"; wait "$a" 2>/dev/null || true
  : > "$out/$shard-a.err"
  start_worker $shard-a "$out/$shard.json"; a=$WORKER_PID
  # During: as soon as its stop signals are handled (its first line), before it reaches Redis.
  if [ $phase = during ]; then wait_until 30 grep -q " consumer=$shard-a " "$out/$shard-a.err" || { bad "$name (no start)"; continue; }
  else wait_until 30 grep -q 're-read own pending entries' "$out/$shard-a.err" || { bad "$name (no take-back)"; continue; }
  fi
  st=0; stop_worker "$a" || st=$?
  handed=$(sed -n 's/.* handed_back=\([0-9]*\).*/\1/p' "$out/$shard-a.err" | tail -n 1)
  pending=$(pending_count $shard)
  ready=$(idle_ready $shard 120000)
  if [ $phase = short ]; then
    verdict=$([ "$st" -eq 1 ] && [ "${handed:-0}" -gt 0 ] && [ "$pending" -eq "$handed" ] && [ "$ready" -eq "$pending" ] && echo yes || echo no)
  else
    verdict=$([ "$st" -eq 0 ] && [ "$pending" -eq 0 ] && [ "${handed:-0}" -eq 0 ] && has_outcomes $shard $n && echo yes || echo no)
  fi
  # Another worker (another name) finishes whatever is left, long before min_idle_ms.
  # (Its SIGTERM only once it handles one: its first line.)
  start_worker $shard-b "$out/$shard.json"; b=$WORKER_PID
  if [ "$verdict" = yes ] && wait_until 60 drained $shard && wait_until 30 grep -q " consumer=$shard-b " "$out/$shard-b.err" \
     && stop_worker "$b" && check $shard none; then
    ok "$name (exit $st, handed back ${handed:-0}, $pending pending after the stop, $ready of them reclaimable at once)"
  else
    kill -9 "$b" 2>/dev/null || true
    bad "$name (exit $st, handed back ${handed:-?}, pending $pending, reclaimable $ready, outcomes $(outcome_count $shard))"
  fi
done
}

# ---------------------------------------------------------------------------------------------
test_short_drain() {
name="SIGTERM with a drain too short for what is in flight: exit 1, the rest left pending (not acknowledged), a restart under the same name finishes it exactly once"
shard=short
n=3000
notifications $shard $n > "$out/$shard.jsonl"
config "$out/$shard.json" $shard "$slow_port" ', "max_in_flight": 1000, "drain_ms": 100'
"$cli" enqueue --batch 1 --redis "127.0.0.1:$redis_port" --shard $shard --file "$out/$shard.jsonl" > /dev/null
start_worker short-a "$out/$shard.json"; a=$WORKER_PID
if wait_until 60 has_outcomes $shard 1; then
  st=0; stop_worker "$a" || st=$?
  left=$(sed -n 's/.* left_pending=\([0-9]*\).*/\1/p' "$out/short-a.err" | tail -n 1)
  pending=$(pending_count $shard)
  start_worker short-a "$out/$shard.json"; b=$WORKER_PID
  if [ "$st" -eq 1 ] && [ "${left:-0}" -gt 0 ] && [ "$pending" -eq "$left" ] \
     && wait_until 120 has_outcomes $shard $n && stop_worker "$b" && [ "$(pending_count $shard)" -eq 0 ] && check $shard none; then
    ok "$name ($left left pending, re-read at restart)"
  else bad "$name (exit $st, left ${left:-?}, pending $pending)"; fi
else bad "$name (no outcome)"; fi
}

# ---------------------------------------------------------------------------------------------
test_dead_letter() {
name="an entry delivered max_deliveries times already with a request written each time, or 3 x max_deliveries times without, is dead-lettered, whether reclaimed or re-read as our own, its detail saying what happened; neither counts a delivery of its own, and the records of written deliveries are dropped"
shard=dead
config "$out/$shard.json" $shard "$mock_port" ', "deadline_ms": 1000, "max_sends": 1, "min_idle_ms": 2000, "max_deliveries": 5'
rcli XGROUP CREATE "push:{$shard}" senders 0 MKSTREAM > /dev/null
ghost=$(rcli XADD "push:{$shard}" '*' id ghost app demo token "$good" payload '{"aps":{}}')
mine=$(rcli XADD "push:{$shard}" '*' id mine app demo token "$good" payload '{"aps":{}}')
fine=$(rcli XADD "push:{$shard}" '*' id fine app demo token "$good" payload '{"aps":{}}')
# Pending with a dead consumer for long, delivered 15 times with no request written (the
# allowance of deliveries without one, 2 x max_deliveries, and max_deliveries more), and with
# this worker's own name, delivered 9 times, each with a request written.
rcli XCLAIM "push:{$shard}" senders ghost 0 "$ghost" IDLE 600000 RETRYCOUNT 15 FORCE > /dev/null
rcli XCLAIM "push:{$shard}" senders dead-a 0 "$mine" IDLE 0 RETRYCOUNT 9 FORCE > /dev/null
rcli HSET "written:{$shard}" "$mine" 9 > /dev/null
start_worker dead-a "$out/$shard.json"; a=$WORKER_PID
if wait_until 60 has_outcomes $shard 3 && stop_worker "$a" && [ "$(pending_count $shard)" -eq 0 ]; then
  "$cli" outcomes --redis "127.0.0.1:$redis_port" --shard $shard --json > "$out/$shard.outcomes"
  if python3 - "$out/$shard.outcomes" <<'PY'
import json, sys
rows = {r["id"]: r for r in map(json.loads, open(sys.argv[1]))}
assert len(rows) == 3, rows
for nid, n, w in (("ghost", 15, 0), ("mine", 9, 9)):
    r = rows[nid]
    assert (r["outcome"], r["reason"]) == ("FAILED", "DeadLetter") and r["deliveries"] == n and "apns_id" not in r, r
    assert r["detail"].startswith(f"{n} deliveries (max_deliveries 5), {w} of them known to have written a request to APNs, each ended without an outcome: the worker holding it died"), r["detail"]
assert rows["fine"]["outcome"] == "ACCEPTED" and rows["fine"]["deliveries"] == 1, rows["fine"]
PY
  then
    if [ "$(rcli HLEN "written:{$shard}")" -eq 0 ]; then ok "$name"; else bad "$name (written:{$shard} kept $(rcli HLEN "written:{$shard}") records)"; fi
  else bad "$name"; fi
else bad "$name (outcomes $(outcome_count $shard), pending $(pending_count $shard))"; fi
}

# ---------------------------------------------------------------------------------------------
test_bad_entries() {
name="bad entries each get a REJECTED outcome with the reason, are acknowledged, and the worker keeps sending"
shard=bad
config "$out/$shard.json" $shard "$mock_port" ', "metrics_port": 0'
big=$(python3 -c 'print("x" * 5000)')
cat > "$out/$shard.in" <<JSONL
{"app":"demo","token":"$good","payload":{"aps":{"alert":"no id"}}}
{"id":"dup","app":"demo","token":"$good","payload":{"aps":{"alert":"first"}}}
{"id":"dup","app":"demo","token":"$good","payload":{"aps":{"alert":"second"}}}
{"id":"badtoken","app":"demo","token":"12345","payload":{"aps":{"alert":"x"}}}
{"id":"notobject","app":"demo","token":"$good","payload":"[1,2,3]"}
{"id":"notjson","app":"demo","token":"$good","payload":"{\"aps\":"}
{"id":"pushtype","app":"demo","token":"$good","push_type":"smoke-signal","payload":{"aps":{}}}
{"id":"toolarge","app":"demo","token":"$good","payload":{"aps":{"alert":"$big"}}}
{"id":"unknownapp","app":"nope","token":"$good","payload":{"aps":{}}}
{"id":"priority","app":"demo","token":"$good","priority":7,"payload":{"aps":{}}}
{"id":"topic","app":"demo","token":"$good","topic":"com.other.app","payload":{"aps":{}}}
{"id":"version","v":"9","app":"demo","token":"$good","payload":{"aps":{}}}
{"id":"refusedkey","app":"wrongkey","token":"$good","payload":{"aps":{}}}
{"id":"good","app":"demo","token":"$good","payload":{"aps":{"alert":"still running"}}}
JSONL
"$cli" enqueue --batch 1 --redis "127.0.0.1:$redis_port" --shard $shard --file "$out/$shard.in" > /dev/null
rcli XADD "push:{$shard}" '*' id twice id twice app demo token "$good" payload '{"aps":{}}' > /dev/null
start_worker bad-a "$out/$shard.json"; a=$WORKER_PID
metrics_ok=no
if wait_until 60 has_outcomes $shard 15 && wait_until 10 grep -q " metrics=http://" "$out/bad-a.err"; then
  metrics=$(sed -n 's|.* metrics=\(http://[0-9.:]*\)/metrics.*|\1|p' "$out/bad-a.err")
  # Published a few times a second: wait for the last outcome to show, then check the rest.
  if wait_until 10 sh -c "curl -sf $metrics/metrics | grep -q 'outcome=\"ACCEPTED\",reason=\"\"} 2'" \
     && wait_until 10 sh -c "curl -sf $metrics/metrics | grep -q '^swiftpush_worker_read_total 15$'" \
     && curl -sf "$metrics/metrics" > "$out/metrics.txt" && [ "$(curl -sf "$metrics/healthz")" = ok ] \
     && grep -q '^swiftpush_worker_outcomes_total{app="nope",outcome="REJECTED",reason="UnknownApp"} 1$' "$out/metrics.txt" \
     && grep -q '^swiftpush_worker_outcomes_total{app="demo",outcome="REJECTED",reason="BadDeviceToken"} 1$' "$out/metrics.txt" \
     && grep -q '^swiftpush_worker_duplicates_total 1$' "$out/metrics.txt" \
     && grep -q '^swiftpush_worker_latency_seconds_count [1-9]' "$out/metrics.txt" \
     && grep -q '^swiftpush_worker_in_flight 0$' "$out/metrics.txt" \
     && grep -q '^swiftpush_worker_connections_open [1-9]' "$out/metrics.txt" \
     && grep -q '^swiftpush_notifications_total{app="demo",outcome="accepted",reason="None"} [1-9]' "$out/metrics.txt" \
     && [ "$(grep -c '^# TYPE swiftpush_writes_total counter$' "$out/metrics.txt")" = 1 ] \
     && [ "$(curl -s -o /dev/null -w '%{http_code}' "$metrics/nothing")" = 404 ]; then metrics_ok=yes; fi
fi
if [ "$metrics_ok" = yes ] && stop_worker "$a" && [ "$(pending_count $shard)" -eq 0 ]; then
  "$cli" outcomes --redis "127.0.0.1:$redis_port" --shard $shard --json > "$out/$shard.outcomes"
  if python3 - "$out/$shard.outcomes" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
by = {}
for r in rows:
    by.setdefault(r["id"], []).append(r)
want = {"badtoken": "BadDeviceToken", "notobject": "BadPayload", "notjson": "BadPayload",
        "pushtype": "BadPushType", "toolarge": "PayloadTooLarge", "unknownapp": "UnknownApp",
        "priority": "BadPriority", "topic": "TopicDisallowed", "version": "UnsupportedVersion",
        "refusedkey": "InvalidProviderToken"}
problems = []
# Entries without a usable id (none; two 'id' fields) are reported under id "".
if sorted(r["reason"] for r in by.get("", [])) != ["BadId", "MissingId"]:
    problems.append(f"no usable id: {by.get('')}")
for nid, reason in want.items():
    got = by.get(nid, [])
    if len(got) != 1 or got[0]["outcome"] != "REJECTED" or got[0]["reason"] != reason:
        problems.append(f"{nid!r}: want one REJECTED {reason}, got {got}")
details = {"badtoken": "odd number of hex digits", "notobject": "must be a JSON object",
           "toolarge": "allows 4096", "unknownapp": "unknown app 'nope'"}
for nid, text in details.items():
    if by.get(nid) and text not in by[nid][0].get("detail", ""):
        problems.append(f"{nid}: detail {by[nid][0].get('detail')!r} lacks {text!r}")
dup = sorted(by.get("dup", []), key=lambda r: [int(x) for x in r["entry"].split("-")])
if [r["reason"] for r in dup] != ["", "DuplicateId"] or dup[0]["outcome"] != "ACCEPTED":
    problems.append(f"dup: want ACCEPTED then REJECTED DuplicateId, got {dup}")
if [r["outcome"] for r in by.get("good", [])] != ["ACCEPTED"]:
    problems.append(f"good: {by.get('good')}")
if by.get("refusedkey") and by["refusedkey"][0]["status"] != 403:
    problems.append(f"refusedkey: {by['refusedkey']}")
for p in problems:
    print("   ", p)
sys.exit(1 if problems else 0)
PY
  then ok "$name (15 entries: 13 kinds of bad entry incl. unknown app and a refused key, a duplicate, a good one; /metrics counts them, /healthz ok)"
  else bad "$name"; fi
else bad "$name (outcomes $(outcome_count $shard), pending $(pending_count $shard), metrics $metrics_ok)"; cat "$out/metrics.txt" 2>/dev/null | grep -v "^#" | head -40; fi
}

# ---------------------------------------------------------------------------------------------
test_delayed_retry() {
name="a 429 goes to the delayed set and comes back when due: one ACCEPTED outcome once the device calms down"
shard=delay
busy=00000000000000000000000000000000000000000000000000000000000000b1
mock_start busy "$cli" "$pki" --too-many-requests "$busy" --control-port-file "$out/busy.port" --lenient-initial-limit
busy_port=$MOCK_PORT
wait_until 10 test -s "$out/busy.port"
config "$out/$shard.json" $shard "$busy_port" ', "delayed_retry_ms": 300, "max_delayed_retries": 3'
# The client's own retries of a 429 (10 answered attempts, 1 s doubling, within the 30 s
# deadline: each trip took 15-30 s) off, so that each 429 reaches the worker's delayed set at once.
sed -i 's/"topics": \["com.example.app"\]}/"topics": ["com.example.app"], "max_attempts": 1}/g' "$out/$shard.json"
printf '{"id":"calm","app":"demo","token":"%s","payload":{"aps":{"alert":"later"}}}\n' "$busy" > "$out/$shard.jsonl"
printf '{"id":"other","app":"demo","token":"%s","payload":{"aps":{"alert":"now"}}}\n' "$good" >> "$out/$shard.jsonl"
"$cli" enqueue --batch 1 --redis "127.0.0.1:$redis_port" --shard $shard --file "$out/$shard.jsonl" > /dev/null
start_worker delay-a "$out/$shard.json"; a=$WORKER_PID
# The first 429 parks the notification (its entry settled and deleted; a new entry waits in
# delayed:{delay}, promoted when due); once it has come back and been parked again (its second
# trip: retries 2), the device calms down.
if wait_until 60 bash -c "[ \$(delayed_retries $shard) -ge 2 ]" \
   && curl -s -d '{}' "http://127.0.0.1:$(cat "$out/busy.port")/faults" > /dev/null \
   && wait_until 60 has_outcomes $shard 2 && stop_worker "$a" && [ "$(pending_count $shard)" -eq 0 ] \
   && [ "$(rcli ZCARD "delayed:{$shard}")" -eq 0 ] && check $shard none \
   && grep -q "delayed=[1-9]" "$out/delay-a.err" && grep -q "promoted=[1-9]" "$out/delay-a.err"
then ok "$name ($(sed -n 's/.* delayed=\([0-9]*\).*/\1/p' "$out/delay-a.err" | tail -1) trips through the delayed set for 2 notifications)"
else bad "$name (outcomes $(outcome_count $shard), stream $(rcli XLEN "push:{$shard}"), delayed $(rcli ZCARD "delayed:{$shard}"))"; fi
}

# ---------------------------------------------------------------------------------------------
test_unknown_results() {
name="unknown results (the mock never answers every 10th request): resent by default, or recorded FAILED maybe_delivered"
mock_start stall "$cli" "$pki" --stall-every 10 --lenient-initial-limit
stall_port=$MOCK_PORT
unknown_ok=yes
for policy in resend record; do
  shard=unknown-$policy
  notifications $shard 2000 | grep -v '"token": "0000' > "$out/$shard.jsonl"
  config "$out/$shard.json" $shard "$stall_port" ", \"deadline_ms\": 1000, \"unknown_results\": \"$policy\", \"max_sends\": 5"
  "$cli" enqueue --batch 1 --redis "127.0.0.1:$redis_port" --shard $shard --file "$out/$shard.jsonl" > /dev/null
  total=$(wc -l < "$out/$shard.jsonl")
  start_worker "$shard" "$out/$shard.json"; a=$WORKER_PID
  if wait_until 120 has_outcomes $shard "$total" && stop_worker "$a" && [ "$(pending_count $shard)" -eq 0 ]; then
    "$cli" outcomes --redis "127.0.0.1:$redis_port" --shard $shard --json > "$out/$shard.outcomes"
    if ! python3 - "$out/$shard.outcomes" "$total" "$policy" <<'PY'
import collections, json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
total, policy = int(sys.argv[2]), sys.argv[3]
ids = collections.Counter(r["id"] for r in rows)
kinds = collections.Counter((r["outcome"], r["reason"], r.get("maybe_delivered", "")) for r in rows)
resent = sum(1 for r in rows if r["attempts"] > 1)
print(f"    {policy}: {dict(kinds)}, {resent} sent more than once")
assert len(ids) == total and max(ids.values()) == 1, "not exactly one outcome per id"
if policy == "resend":
    assert kinds[("ACCEPTED", "", "")] == total and resent > 0, kinds
else:
    assert kinds[("FAILED", "Timeout", "1")] > 0 and kinds[("ACCEPTED", "", "")] + kinds[("FAILED", "Timeout", "1")] == total, kinds
PY
    then unknown_ok=no; fi
  else unknown_ok=no; fi
done
if [ "$unknown_ok" = yes ]; then ok "$name"; else bad "$name"; fi
}

# ---------------------------------------------------------------------------------------------
test_redis_restart() {
name="Redis killed mid-run and restarted from its AOF: the worker reconnects by itself; every id exactly one outcome"
shard=restart
n=$((count / 5))
notifications $shard "$n" > "$out/$shard.jsonl"
config "$out/$shard.json" $shard "$mock_port"
"$cli" enqueue --batch 1 --redis "127.0.0.1:$redis_port" --shard $shard --file "$out/$shard.jsonl" > /dev/null
start_worker restart-a "$out/$shard.json"; a=$WORKER_PID
if wait_until 60 has_outcomes $shard $((n / 5)); then
  if restart_redis && wait_until 120 has_outcomes $shard "$n" && stop_worker "$a" && [ "$(pending_count $shard)" -eq 0 ] && check $shard \
     && grep -q "redis_reconnects=[1-9]" "$out/restart-a.err"
  then ok "$name ($(sed -n 's/.* redis_reconnects=\([0-9]*\).*/\1/p' "$out/restart-a.err" | tail -n 1) reconnect(s))"
  else bad "$name (outcomes $(outcome_count $shard), pending $(pending_count $shard))"; fi
else bad "$name (no progress before the kill)"; fi
}

# ---------------------------------------------------------------------------------------------
test_redis_loading() {
# Issue 31: a restarted Redis answers LOADING until its data set is read back; that is expected
# and ends by itself, so the worker says so at warning, not "cannot reach Redis" at error. A
# Redis of this test's own, whose AOF holds 4,000 writes read back at 0.5 ms each
# (key-load-delay): its LOADING lasts ~2-4 s, long enough for the worker's reconnects to meet it.
name="Redis restarted and loading its data set (LOADING): the worker logs a warning that says what it is, no error, and goes on once it is loaded"
shard=loading
local port dir pid n=200 st=0
port=$(free_port); dir="$out/redis-loading"; mkdir -p "$dir"
loading_redis() {
  redis-server --port "$port" --bind 127.0.0.1 --dir "$dir" --appendonly yes --appendfsync always --save "" "$@" >> "$out/redis-loading.log" 2>&1 &
  pid=$!
  WORKER_PIDS+=("$pid")   # killed at exit with the workers, if the test stops half-way
}
loading_redis
wait_until 30 sh -c "redis-cli -p $port ping 2>/dev/null | grep -q PONG" || { bad "$name (its Redis did not start)"; return; }
for i in $(seq 1 4000); do echo "SET filler:$i $i"; done | redis-cli -p "$port" > /dev/null
notifications $shard $((2 * n)) > "$out/$shard.jsonl"
head -n $n "$out/$shard.jsonl" > "$out/$shard-1.jsonl"; tail -n $n "$out/$shard.jsonl" > "$out/$shard-2.jsonl"
config "$out/$shard-shared.json" $shard "$mock_port"
sed "s/\"port\": $redis_port}/\"port\": $port}/" "$out/$shard-shared.json" > "$out/$shard.json"
"$cli" enqueue --batch 1 --redis "127.0.0.1:$port" --shard $shard --file "$out/$shard-1.jsonl" > /dev/null
start_worker loading "$out/$shard.json"; a=$WORKER_PID
loaded() { [ "$(redis-cli -p "$port" XLEN "outcomes:{$shard}")" -ge "$1" ]; }
if wait_until 60 loaded $n; then
  kill -9 "$pid"; wait "$pid" 2>/dev/null || true
  loading_redis --key-load-delay 500
  if wait_until 30 grep -q 'level=warning msg="Redis is loading its data set' "$out/loading.err" \
     && wait_until 30 sh -c "redis-cli -p $port ping 2>/dev/null | grep -q PONG" \
     && "$cli" enqueue --batch 1 --redis "127.0.0.1:$port" --shard $shard --file "$out/$shard-2.jsonl" > /dev/null \
     && wait_until 60 loaded $((2 * n)); then
    stop_worker "$a" || st=$?
    if [ "$st" -eq 0 ] && ! grep 'level=error' "$out/loading.err" | grep -q LOADING \
       && [ "$(redis-cli -p "$port" XPENDING "push:{$shard}" senders | head -1)" -eq 0 ]
    then ok "$name ($(grep -c 'Redis is loading its data set' "$out/loading.err") warning line(s))"
    else bad "$name (exit $st; $(grep 'level=error' "$out/loading.err" | grep LOADING | head -n 1))"; fi
  else bad "$name (no warning, or no progress after the load: $(grep -c LOADING "$out/loading.err") LOADING lines, outcomes $(redis-cli -p "$port" XLEN "outcomes:{$shard}"))"; fi
else bad "$name (no outcome before the restart)"; fi
kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true
}

# ---------------------------------------------------------------------------------------------
test_redis_unreachable() {
name="SIGTERM while Redis is unreachable: the worker stops retrying and exits within the drain time"
nowhere=$(free_port)
config "$out/somewhere.json" nowhere "$mock_port"
sed "s/\"port\": $redis_port}/\"port\": $nowhere}/" "$out/somewhere.json" | sed 's/"reclaim_interval_ms": 500/"reclaim_interval_ms": 500, "drain_ms": 1000/' > "$out/nowhere.json"
start_worker nowhere "$out/nowhere.json"; a=$WORKER_PID
if wait_until 20 grep -q "cannot reach Redis" "$out/nowhere.err"; then
  t0=$SECONDS
  st=0; stop_worker "$a" || st=$?
  if [ "$st" -eq 0 ] && [ $((SECONDS - t0)) -le 10 ]; then ok "$name ($((SECONDS - t0)) s)"; else bad "$name (exit $st after $((SECONDS - t0)) s)"; fi
else bad "$name (no retry logged)"; fi
}

# ---------------------------------------------------------------------------------------------
test_configuration_errors() {
name="configuration errors exit 2 with the reason (unreadable key, min-idle not above the longest delivery)"
config "$out/cfg.json" cfg "$mock_port"
sed "s|AuthKey_TESTKEY001.p8|missing.p8|" "$out/cfg.json" > "$out/cfg-missing.json"
config "$out/cfg-idle.json" cfg "$mock_port" ', "deadline_ms": 10000, "min_idle_ms": 5000'
s1=0; "$cli" worker --config "$out/cfg-missing.json" > /dev/null 2> "$out/cfg1.txt" || s1=$?
s2=0; "$cli" worker --config "$out/cfg-idle.json" > /dev/null 2> "$out/cfg2.txt" || s2=$?
if [ "$s1" -eq 2 ] && grep -q 'app "demo": key_file: cannot read key file' "$out/cfg1.txt" \
   && [ "$s2" -eq 2 ] && grep -q "min_idle_ms (5000) must exceed the longest delivery" "$out/cfg2.txt"
then ok "$name"; else bad "$name (exit $s1, $s2)"; cat "$out/cfg1.txt" "$out/cfg2.txt"; fi
}

test_outcomes_cli() {
name="outcomes prints text lines and --count stops; a format-2 entry it cannot read is an error, not an outcome; worker --help names the config"
rcli XADD "outcomes:{unreadable}" '*' v 2 worker w count 1 outcomes '[{"id":' > /dev/null
unreadable=0; "$cli" outcomes --redis "127.0.0.1:$redis_port" --shard unreadable > "$out/unreadable.out" 2> "$out/unreadable.err" || unreadable=$?
if "$cli" outcomes --redis "127.0.0.1:$redis_port" --shard bad --count 3 > "$out/text.out" \
   && [ "$(wc -l < "$out/text.out")" -eq 3 ] && grep -q " REJECTED 0 MissingId apns-id=- entry=" "$out/text.out" \
   && [ "$unreadable" -eq 1 ] && [ ! -s "$out/unreadable.out" ] && grep -q "not a JSON array of objects" "$out/unreadable.err" \
   && grep -q -- "--config <FILE>" <<< "$("$cli" worker --help)"
then ok "$name"; else bad "$name"; cat "$out/text.out" "$out/unreadable.out" "$out/unreadable.err"; fi
}

test_library_links() {
name="libswiftpush.so links neither hiredis nor anything of the worker's (only the CLI does)"
# Outputs are taken whole before grep reads them: with pipefail, `ldd ... | grep -q` fails
# whenever grep's early exit cuts ldd's write short (SIGPIPE), which made this test flaky.
if ! grep -q hiredis <<< "$(ldd "$build/libswiftpush.so")" && grep -q hiredis <<< "$(ldd "$cli")" \
   && ! grep -qi -e redis -e SwiftPushWorker <<< "$(nm -D "$build/libswiftpush.so")"
then ok "$name"; else bad "$name"; fi

# ArgumentParser, Hummingbird and SwiftNIO are linked statically, so ldd cannot see them: look
# for their symbols (the CLI's prove each pattern matches them; outputs taken whole, as above).
name="libswiftpush.so holds nothing of swift-argument-parser, Hummingbird or SwiftNIO (only the CLI does)"
local lib_symbols cli_symbols linked=yes pattern
lib_symbols=$(nm "$build/libswiftpush.so"); cli_symbols=$(nm "$cli")
for pattern in 14ArgumentParser 11Hummingbird 7NIOCore 8NIOPosix; do
  if grep -q "$pattern" <<< "$lib_symbols" || ! grep -q "$pattern" <<< "$cli_symbols"; then linked="no ($pattern)"; fi
done
if [ "$linked" = yes ]; then ok "$name"; else bad "$name: $linked"; fi
}

# ---------------------------------------------------------------------------------------------
# Issue 23: with answers 300 ms late and a worker killed every half second, 1,998 of 2,000 healthy
# notifications ended FAILED DeadLetter after 6 restarts, most never sent: each restart's re-read
# counted a delivery of every entry the worker held.
test_crash_loop() {
name="a crash loop (a worker SIGKILLed a second into each of 6 lives, answers 300 ms late) dead-letters no healthy notification: every id exactly one ACCEPTED outcome"
shard=loop
local n=3000 kills=0 lines settled summary
# 50 streams a connection: a life of a second answers a few hundred, so every life dies holding most.
mock_start crawl "$cli" "$pki" --delay-ms 300 --max-streams 50 --lenient-initial-limit
notifications $shard $n > "$out/$shard.jsonl"
config "$out/$shard.json" $shard "$MOCK_PORT" ', "max_deliveries": 5'
"$cli" enqueue --batch 1 --redis "127.0.0.1:$redis_port" --shard $shard --file "$out/$shard.jsonl" > /dev/null
start_worker loop-a "$out/$shard.json"; a=$WORKER_PID
if ! wait_until 60 all_delivered $shard; then bad "$name (the first life never read them all)"; return; fi
while [ "$kills" -lt 6 ] && [ "$(pending_count $shard)" -gt 0 ]; do
  # A life lasts a second from its first outcome (so that on a slow machine too it sees answers
  # before it dies: a crash loop faster than APNs's answers is indistinguishable from an entry
  # that kills its worker). The crash loop is the scenario: this sleep is its period.
  settled=$(outcome_count $shard)
  wait_until 60 has_outcomes $shard $((settled + 1)) || { bad "$name (life $((kills + 1)) recorded nothing)"; return; }
  sleep 1
  lines=$(grep -c 'own pending entries' "$out/loop-a.err" || true)
  kill -9 "$a"; wait "$a" 2>/dev/null || true
  kills=$((kills + 1))
  start_worker loop-a "$out/$shard.json"; a=$WORKER_PID
  # The next life takes back what the last one held (its re-read is logged), if anything.
  wait_until 60 sh -c "[ \$(grep -c 'own pending entries' '$out/loop-a.err') -gt $lines ] || [ \$(redis-cli -p $redis_port XPENDING 'push:{$shard}' senders | head -1) -eq 0 ]" \
    || { bad "$name (life $((kills + 1)) never re-read)"; return; }
done
if wait_until 300 drained $shard; then
  sa=0; stop_worker "$a" || sa=$?
  "$cli" outcomes --redis "127.0.0.1:$redis_port" --shard $shard --json > "$out/$shard.outcomes"
  summary=$(python3 -c '
import collections, json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
kinds = collections.Counter(r["reason"] or r["outcome"] for r in rows)
print(" ".join(f"{k}:{v}" for k, v in sorted(kinds.items())), "highest-deliveries:%d" % max(r["deliveries"] for r in rows))' "$out/$shard.outcomes")
  if [ "$sa" -eq 0 ] && check $shard none > /dev/null; then ok "$name ($kills kills; $summary)"
  else bad "$name (exit $sa; $kills kills; $summary)"; fi
else bad "$name (not drained: pending $(pending_count $shard))"; fi
}

# ---------------------------------------------------------------------------------------------
# Issue 31, item 2 (its smallest reproduction, scaled): one worker, answers 1 s late, each life
# SIGKILLed as soon as the mock has a request of it, before any answer (a crash loop faster
# than APNs's answers). Most-delivered first sent the same head entry in every life and
# dead-lettered it after max_deliveries lives (11 of 600 in a minute of 1.2 s lives);
# least-delivered first spreads the counts. Every 410 must end recorded: each token gone gets
# its Unregistered outcome and unregistered row.
# mock_requests CONTROL_PORT: the requests a mock has received (its /stats).
mock_requests() { curl -s "http://127.0.0.1:$1/stats" | sed -n 's/.*"requests" *: *\([0-9]*\).*/\1/p'; }
# mock_requests_above CONTROL_PORT N: it has received more than N.
mock_requests_above() { [ "$(mock_requests "$1")" -gt "$2" ] 2>/dev/null; }
test_crash_loop_late() {
name="a crash loop faster than APNs's answers (20 lives each SIGKILLed once its first request reached the mock, answers 1 s late, 200 entries, 8 tokens gone) dead-letters nothing: every id one outcome, every 410 recorded"
shard=late
local n=200 kills=0 gone summary seen lport
gone=$(python3 -c 'print(",".join("ff%062x" % (i + 1) for i in range(0, 200, 25)))')
mock_start latecrash "$cli" "$pki" --delay-ms 1000 --lenient-initial-limit --control-port-file "$out/late.control" \
  $(echo "$gone" | tr , '\n' | sed 's/^/--unregistered /')
wait_until 10 test -s "$out/late.control" || { bad "$name (mock without control port)"; return; }
lport=$(cat "$out/late.control")
python3 -c 'import json
for i in range(200): print(json.dumps({"id": f"late-{i}", "app": "demo", "token": "ff%062x" % (i + 1), "payload": {"aps": {"alert": "x"}}}))' > "$out/$shard.jsonl"
config "$out/$shard.json" $shard "$MOCK_PORT" ', "deadline_ms": 5000, "max_sends": 2, "min_idle_ms": 60000, "max_deliveries": 5'
"$cli" enqueue --batch 1 --redis "127.0.0.1:$redis_port" --shard $shard --file "$out/$shard.jsonl" > /dev/null
while [ "$kills" -lt 20 ]; do
  seen=$(mock_requests "$lport")
  start_worker late-a "$out/$shard.json"; a=$WORKER_PID
  wait_until 30 mock_requests_above "$lport" "$seen" || { bad "$name (life $((kills + 1)) sent nothing)"; return; }
  kill -9 "$a"; wait "$a" 2>/dev/null || true
  kills=$((kills + 1))
done
start_worker late-a "$out/$shard.json"; a=$WORKER_PID
if wait_until 40 drained $shard; then
  sa=0; stop_worker "$a" || sa=$?
  "$cli" outcomes --redis "127.0.0.1:$redis_port" --shard $shard --json > "$out/$shard.outcomes"
  summary=$(python3 -c '
import collections, json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
kinds = collections.Counter(r["reason"] or r["outcome"] for r in rows)
print(" ".join(f"{k}:{v}" for k, v in sorted(kinds.items())), "highest-deliveries:%d" % max(r["deliveries"] for r in rows))' "$out/$shard.outcomes")
  if [ "$sa" -eq 0 ] && check $shard "$gone" > "$out/$shard.check"; then ok "$name ($kills kills; $summary)"
  else bad "$name (exit $sa; $kills kills; $summary; $(tail -n 3 "$out/$shard.check" | tr '\n' ' '))"; fi
else bad "$name (not drained: pending $(pending_count $shard), stream $(rcli XLEN "push:{$shard}"))"; fi
}

# ---------------------------------------------------------------------------------------------
# Issue 23: a worker holding thousands of entries (answers 300 ms late) when Redis comes back
# re-read them all, XREADGROUP ... 0 in pieces of max_in_flight - held, each raising the delivery
# counters of entries it still held, until they stood near max_deliveries.
test_redis_restart_held() {
name="Redis killed and restarted from its AOF while the worker holds thousands of entries: no delivery count rises, its own pending entries are re-read in one pass, and completion shows (pending and lag 0)"
shard=held
local n=20000 held_at_kill
notifications $shard $n > "$out/$shard.jsonl"
config "$out/$shard.json" $shard "$slow_port" ', "max_in_flight": 5000, "metrics_port": 0'
"$cli" enqueue --batch 1 --redis "127.0.0.1:$redis_port" --shard $shard --file "$out/$shard.jsonl" > /dev/null
start_worker held-a "$out/$shard.json"; a=$WORKER_PID
if wait_until 60 pending_at_least $shard 4000; then
  held_at_kill=$(pending_count $shard)
  if restart_redis; then
    # The highest delivery count of any pending entry, sampled until the end (an entry the
    # worker still held does not show a raised count in its outcome: intake skips it).
    python3 - "$redis_port" "push:{$shard}" > "$out/$shard.maxcount" <<'PY' &
import json, subprocess, sys
port, stream, top = sys.argv[1], sys.argv[2], 0
while True:
    r = subprocess.run(["redis-cli", "-p", port, "--json", "XPENDING", stream, "senders", "-", "+", "100000"], capture_output=True, text=True)
    rows = json.loads(r.stdout or "[]") if r.stdout.startswith("[") else []
    top = max([top] + [row[3] for row in rows])
    if not rows:
        break
print(top)
PY
    sampler=$!
  fi
  if wait_until 120 drained $shard && wait "$sampler" \
     && wait_until 10 sh -c "curl -sf $(metrics_url held-a)/metrics > '$out/$shard.metrics' && grep -q '^swiftpush_worker_lag 0$' '$out/$shard.metrics' && grep -q '^swiftpush_worker_pending 0$' '$out/$shard.metrics'"; then
    sa=0; stop_worker "$a" || sa=$?
    "$cli" outcomes --redis "127.0.0.1:$redis_port" --shard $shard --json > "$out/$shard.outcomes"
    deliveries=$(python3 -c '
import collections, json, sys
print(" ".join(f"{k}:{v}" for k, v in sorted(collections.Counter(json.loads(l)["deliveries"] for l in open(sys.argv[1])).items())))' "$out/$shard.outcomes")
    # One line per re-read (today's at the end of the pass, with its round trips; before issue
    # 23, one per XREADGROUP ... 0).
    rereads=$(grep -c 'own pending entries' "$out/held-a.err" || true)
    reads=$(sed -n 's/.*own pending entries.* reads=\([0-9]*\).*/\1/p' "$out/held-a.err" | awk '{ s += $1 } END { print s + 0 }')
    maxcount=$(cat "$out/$shard.maxcount")
    if [ "$sa" -eq 0 ] && check $shard none && [ "$deliveries" = "1:$n" ] && [ "$maxcount" -le 1 ] && [ "$rereads" -le 2 ] && [ "$reads" -le 20 ] \
       && grep -q "redis_reconnects=[1-9]" "$out/held-a.err"
    then ok "$name ($held_at_kill pending at the kill; highest delivery count $maxcount; $rereads re-read(s) in $reads round trips)"
    else bad "$name (exit $sa; highest delivery count $maxcount, deliveries of the outcomes $deliveries; $rereads re-read lines, $reads round trips)"; fi
  else bad "$name (not drained or lag not 0: pending $(pending_count $shard), $(redis-cli -p $redis_port XINFO GROUPS "push:{$shard}" | tr '\n' ' '))"; fi
else bad "$name (never held 4000)"; fi
}

# ---------------------------------------------------------------------------------------------
# Issue 23: after a Redis restart XINFO GROUPS's lag stayed at thousands with everything
# delivered and nothing pending (Redis 7.0's entries-read counter). XGROUP SETID ... ENTRIESREAD
# puts the counter in that state on purpose; completion must not depend on it.
test_completion_stale_lag() {
name="completion (pending 0, everything delivered, nothing delayed) holds whatever Redis's entries-read counter says: with the group's lag made stale, stream_drained and the worker's lag gauge say done"
shard=stale
notifications $shard 2000 > "$out/$shard.jsonl"
head -n 1000 "$out/$shard.jsonl" > "$out/$shard-1.jsonl"; tail -n 1000 "$out/$shard.jsonl" > "$out/$shard-2.jsonl"
config "$out/$shard.json" $shard "$mock_port" ', "metrics_port": 0'
"$cli" enqueue --batch 1 --redis "127.0.0.1:$redis_port" --shard $shard --file "$out/$shard-1.jsonl" > /dev/null
start_worker stale-a "$out/$shard.json"; a=$WORKER_PID
if wait_until 60 drained $shard && rcli XGROUP SETID "push:{$shard}" senders '$' ENTRIESREAD 0 > /dev/null \
   && "$cli" enqueue --batch 1 --redis "127.0.0.1:$redis_port" --shard $shard --file "$out/$shard-2.jsonl" > /dev/null \
   && wait_until 60 drained $shard; then
  lag=$(rcli XINFO GROUPS "push:{$shard}" | sed -n '/^lag$/{n;p}')
  gauge=no
  wait_until 10 sh -c "curl -sf $(metrics_url stale-a)/metrics | grep -q '^swiftpush_worker_lag 0$'" && gauge=yes
  sa=0; stop_worker "$a" || sa=$?
  if [ "$sa" -eq 0 ] && [ "${lag:-0}" -gt 0 ] && [ "$gauge" = yes ] && check $shard
  then ok "$name (Redis's lag $lag)"
  else bad "$name (exit $sa, Redis's lag ${lag:-none}, the worker's lag gauge 0: $gauge)"; fi
else bad "$name (not drained: pending $(pending_count $shard))"; fi
}

# ---------------------------------------------------------------------------------------------
# Issue 23: an APNs connection killed, GOAWAYs, ~2,000 resends, and nothing in the worker's log
# until the final `stopped ... resent=N` line, which a SIGKILLed worker never writes.
test_apns_events() {
name="APNs trouble (GOAWAYs, connections killed, connections refused: back-off) is logged as it happens, one line per app and kind per interval with counts, and counted at /metrics; the log of a worker SIGKILLed afterwards has it"
local fctl t0 kind lines sums problems="" summary="" n=20000
# 10 streams a connection, answers 20 ms late: about 1,000/s, so that the traffic lasts while the
# faults change (20 s at least).
mock_start flaky "$cli" "$pki" --delay-ms 20 --max-streams 10 --control-port-file "$out/flaky.port" --lenient-initial-limit
wait_until 10 test -s "$out/flaky.port"
fctl=http://127.0.0.1:$(cat "$out/flaky.port")
shard=events
notifications $shard $n | grep -v '"token": "0000' > "$out/$shard.jsonl"
config "$out/$shard.json" $shard "$MOCK_PORT" ', "metrics_port": 0, "max_in_flight": 1000'
"$cli" enqueue --batch 1 --redis "127.0.0.1:$redis_port" --shard $shard --file "$out/$shard.jsonl" > /dev/null
start_worker events-a "$out/$shard.json"; a=$WORKER_PID
t0=$SECONDS
# One fault at a time (each POST replaces the mock's faults, the answers' delay included); each
# must show in the log within seconds, while the worker runs; the GOAWAYs go on until a line has
# counted several together.
if wait_until 60 has_outcomes $shard 1000 \
   && curl -sf -d '{"goaway_after_requests": 300, "response_delay_ms": 20}' "$fctl/faults" > /dev/null \
   && wait_until 10 grep -q 'msg="APNs sent GOAWAY" app=demo' "$out/events-a.err" \
   && wait_until 15 sh -c "grep 'msg=\"APNs sent GOAWAY\" app=demo' '$out/events-a.err' | grep -qv ' count=1 '" \
   && curl -sf -d '{"kill_connection_after_requests": 200, "refuse_connections_ms": 1500, "response_delay_ms": 20}' "$fctl/faults" > /dev/null \
   && wait_until 10 grep -q 'msg="APNs connection lost" app=demo' "$out/events-a.err" \
   && wait_until 10 grep -q 'msg="backing off before the next APNs connection" app=demo' "$out/events-a.err" \
   && curl -sf -d '{"response_delay_ms": 20}' "$fctl/faults" > /dev/null \
   && wait_until 10 sh -c "curl -sf $(metrics_url events-a)/metrics > '$out/$shard.metrics' && grep -q 'event=\"back_off\"} [1-9]' '$out/$shard.metrics'"; then
  # SIGKILLed: what it logged stays; a worker under the same name finishes the rest.
  kill -9 "$a"; wait "$a" 2>/dev/null || true
  for kind in goaway connection_lost back_off; do
    # Rate-limited: at most one line per interval (5 s) since the first, and the lines' counts add
    # up to the last line's total and to /metrics's count at most.
    lines=$(grep -c "event=$kind " "$out/events-a.err" || true)
    sums=$(grep "event=$kind " "$out/events-a.err" | sed -n 's/.* count=\([0-9]*\).* total=\([0-9]*\).*/\1 \2/p' | awk '{ s += $1; t = $2 } END { print s, t }')
    metric=$(sed -n "s/^swiftpush_worker_apns_events_total{app=\"demo\",event=\"$kind\"} \([0-9]*\)$/\1/p" "$out/$shard.metrics")
    read -r sum total <<< "$sums"
    [ "$lines" -ge 1 ] && [ "$lines" -le $(( (SECONDS - t0) / 5 + 2 )) ] && [ "$sum" -eq "$total" ] && [ "${metric:-0}" -ge 1 ] \
      || problems="$problems $kind: $lines lines, counts $sum, total $total, metric ${metric:-none};"
    summary="$summary $kind=$total"
  done
  start_worker events-a "$out/$shard.json"; b=$WORKER_PID
  if [ -z "$problems" ] && wait_until 120 drained $shard && stop_worker "$b" && check $shard none
  then ok "$name (events:$summary)"
  else bad "$name ($problems pending $(pending_count $shard))"; fi
else
  bad "$name (an event never showed; log: $(grep -c level=warning "$out/events-a.err" || true) warning lines)"
  kill -9 "$a" 2>/dev/null || true
fi
curl -sf -d '{}' "$fctl/faults" > /dev/null || true
}

# ---------------------------------------------------------------------------------------------
# Two apps in one worker, one whose key APNs refuses (403 InvalidProviderToken: its connection
# never leaves APNs's one stream of a token connection that has had no success). Each app has one
# connection and the mock allows 5 streams on it, answering 20 ms late: the healthy app's rate
# is bound by 5 streams / 20 ms (250/s), not by the CPU (10 streams left it 5-8% short beside the
# refused app on a loaded machine: the second app's work competes for the cores), so its rate
# alone and beside the refused app can be compared on a busy machine. Before issue 23 the refused
# app's entries, 50/s, filled the in-flight budget every app shares: the healthy app ran at their pace.
test_tenant_isolation() {
name="tenant isolation: beside an app whose key APNs refuses (answers 20 ms late), the refused app sends at most half as many requests as the healthy app (one probe at a time, the rest rejected unsent), every healthy notification is accepted and every refused one rejected once, with and without a worker killed and restarted mid-run"
# What keeps the healthy app's rate is structural (CredentialRefusal): once APNs has refused an
# app's key, one of its notifications at a time (the probe) goes to APNs and the others are
# rejected unsent, so the refused app cannot fill the in-flight budget both apps share. That
# is what is checked here, as a ratio that load cannot move: both apps wait on the same 20 ms
# answers, the healthy app with 5 streams, the refused one's probe alone, so the refused app
# sends about a fifth as many requests as the healthy one sends (0.15-0.18 measured); with its
# notifications sent rather than rejected (the rule turned off) it sent all 2,000 (and the
# healthy app fell from ~210/s to ~58/s). The rates themselves are printed, not compared: a
# timed comparison failed on a loaded machine (issue 34: speed is proven in benchmarks).
mock_start isolation "$cli" "$pki" --delay-ms 20 --max-streams 5 --lenient-initial-limit
local late_port=$MOCK_PORT n=2000 verdict=ok k=0 report=""
for run in beside beside-restart; do
  k=$((k + 1))
  shard=iso-$k-$run
  python3 - $shard $n > "$out/$shard.jsonl" <<'PY'
import json, sys
shard, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    token = "ff%062x" % (i % 997 + 1)
    print(json.dumps({"id": f"{shard}-h{i}", "app": "demo", "token": token, "payload": {"aps": {"alert": "hi"}}}))
    print(json.dumps({"id": f"{shard}-r{i}", "app": "wrongkey", "token": token, "payload": {"aps": {"alert": "hi"}}}))
PY
  config "$out/$shard.json" $shard "$late_port" ', "max_in_flight": 500'
  sed -i 's/"topics": \["com.example.app"\]}/"topics": ["com.example.app"], "connections": 1}/g' "$out/$shard.json"
  "$cli" enqueue --batch 1 --redis "127.0.0.1:$redis_port" --shard $shard --file "$out/$shard.jsonl" > /dev/null
  start_worker $shard "$out/$shard.json"; a=$WORKER_PID
  if [ "$run" = beside-restart ]; then
    # Killed once a third of the healthy app's notifications have outcomes: the restarted
    # worker, which knows nothing of the refusal, must learn it again and hold to it.
    wait_until 120 has_outcomes $shard $((n / 3)) || verdict="$run: no progress before the kill"
    kill -9 "$a"; wait "$a" 2>/dev/null || true
    start_worker $shard "$out/$shard.json"; a=$WORKER_PID
  fi
  if wait_until 300 drained $shard && stop_worker "$a"; then
    "$cli" outcomes --redis "127.0.0.1:$redis_port" --shard $shard --json > "$out/$shard.outcomes"
    # One outcome per id: ACCEPTED for the healthy app, REJECTED 403 InvalidProviderToken (sent
    # or not) for the refused one; and the refused app's requests (attempts > 0) at most half
    # of the healthy app's.
    line=$(python3 - "$out/$shard.outcomes" "$out/$shard.jsonl" <<'PY'
import collections, json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
ids = [json.loads(l)["id"] for l in open(sys.argv[2])]
by = collections.Counter(r["id"] for r in rows)
wrong = [r for r in rows if (r["outcome"], r.get("status"), r["reason"]) != {"demo": ("ACCEPTED", 200, ""), "wrongkey": ("REJECTED", 403, "InvalidProviderToken")}[r["app"]]]
if sorted(by) != sorted(ids) or max(by.values()) != 1 or wrong:
    print(f"bad: {len(by)} ids of {len(ids)}, {max(by.values())} outcomes at most per id, {len(wrong)} unexpected, e.g. {wrong[:1]}")
    sys.exit(0)
healthy = sorted(int(r["stream_id"].split("-")[0]) for r in rows if r["app"] == "demo")
sent = sum(1 for r in rows if r["app"] == "wrongkey" and r["attempts"] > 0)
rate = len(healthy) / max(healthy[-1] - healthy[0], 1) * 1000
healthy_sent = len(healthy)
if sent > healthy_sent // 2:
    print(f"bad: the refused app sent {sent} requests, the healthy app {healthy_sent}: its notifications were sent, not held back by the refusal")
else:
    print(f"ok healthy {rate:.0f}/s, the refused app sent {sent} of {len(ids) // 2}")
PY
)
    case "$line" in bad:*) verdict="$run: $line" ;; *) report="$report $run: ${line#ok };" ;; esac
  else verdict="$run: not drained (pending $(pending_count $shard))"; fi
done
if [ "$verdict" = ok ]; then ok "$name ($report)"; else bad "$name ($verdict)"; fi
}

# ---------------------------------------------------------------------------------------------
# Multicast entries (issue 22): one payload, many tokens; each (id, token) one notification.
# tokens_file FILE N [GONE...]: N tokens, one per line, the GONE ones spread among them.
tokens_file() {
  python3 - "$@" <<'PY'
import sys
path, n, gone = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
tokens = ["ee%062x" % (i + 1) for i in range(n - len(gone))]
for k, g in enumerate(gone):
    tokens.insert((k + 1) * n // (len(gone) + 1), g)
open(path, "w").write("\n".join(tokens) + "\n")
PY
}
check_multicast() {  # check_multicast SHARD TOKENS PER_ENTRY ID [GONE]
  "$cli" outcomes --redis "127.0.0.1:$redis_port" --shard "$1" --json > "$out/$1.outcomes"
  "$cli" outcomes --redis "127.0.0.1:$redis_port" --shard "$1" --unregistered --json > "$out/$1.unregistered"
  python3 Tests/worker/check_multicast.py "$2" "$3" "$4" "$out/$1.outcomes" "$out/$1.unregistered" "${5:-}"
}

test_multicast() {
name="multicast entries: 10 entries of 500 tokens, 2 workers: every token exactly one outcome (accepted ones counted per entry), each 410 its own outcome and one unregistered row, settled entries deleted"
shard=mc
tokens_file "$out/$shard.tokens" 5000 "$gone1" "$gone2" "$gone3"
config "$out/$shard.json" $shard "$mock_port"
if "$cli" enqueue --redis "127.0.0.1:$redis_port" --shard $shard --tokens "$out/$shard.tokens" --id mc --app demo \
     --payload '{"aps":{"alert":"to many"}}' --per-entry 500 > "$out/$shard.enqueue" \
   && grep -q "^enqueued 5000 notifications in 10 entries$" "$out/$shard.enqueue"; then
  start_worker mc-a "$out/$shard.json"; a=$WORKER_PID
  start_worker mc-b "$out/$shard.json"; b=$WORKER_PID
  if wait_until 120 drained $shard; then
    sa=0; sb=0; stop_worker "$a" || sa=$?; stop_worker "$b" || sb=$?
    if [ "$sa" -eq 0 ] && [ "$sb" -eq 0 ] && check_multicast $shard "$out/$shard.tokens" 500 mc "$gone_tokens" > "$out/$shard.check" \
       && [ "$(rcli XLEN "push:{$shard}")" -eq 0 ] && [ "$(rcli HLEN "progress:{$shard}")" -eq 0 ]
    then ok "$name ($(cat "$out/$shard.check"); $(outcome_count $shard) outcomes stream entries)"
    else bad "$name (exit $sa/$sb; $(cat "$out/$shard.check" | tr '\n' ' '); stream $(rcli XLEN "push:{$shard}"))"; fi
  else bad "$name (not drained: pending $(pending_count $shard))"; fi
else bad "$name (enqueue: $(cat "$out/$shard.enqueue"))"; fi
}

# slow_multicast NAME SHARD TOKENS ID [extra JSON members]: a mock of its own answering 250/s (one
# connection of 5 streams, 20 ms late, every request recorded: $slow_control), a worker
# configuration on it ($out/SHARD.json, one connection) and TOKENS tokens ($out/SHARD.tokens)
# enqueued in multicast entries of 1000 with ids ID#k.
slow_multicast() {
  local name=$1 shard=$2 tokens=$3 id=$4 extra=${5:-}
  mock_start "$name" "$cli" "$pki" --delay-ms 20 --max-streams 5 --record --control-port-file "$out/$name.port" --lenient-initial-limit
  local port=$MOCK_PORT
  wait_until 10 test -s "$out/$name.port"
  slow_control=http://127.0.0.1:$(cat "$out/$name.port")
  tokens_file "$out/$shard.tokens" "$tokens"
  config "$out/$shard.json" "$shard" "$port" ", \"max_in_flight\": 1000 $extra"
  sed -i 's/"topics": \["com.example.app"\]}/"topics": ["com.example.app"], "connections": 1}/g' "$out/$shard.json"
  "$cli" enqueue --redis "127.0.0.1:$redis_port" --shard "$shard" --tokens "$out/$shard.tokens" --id "$id" --app demo \
    --payload '{"aps":{"alert":"to many"}}' --per-entry 1000 > /dev/null
}
# sent_distinct SHARD: "SENT DISTINCT" of the requests slow_multicast's mock saw (by apns-id).
sent_distinct() {
  curl -s "$slow_control/record" > "$out/$1.record"
  python3 -c '
import json, sys
ids = [r["apns_id"] for r in json.load(open(sys.argv[1]))]
print(len(ids), len(set(ids)))' "$out/$1.record"
}

test_multicast_kill() {
name="a worker SIGKILLed in the middle of a 1000-token multicast entry: its restart resends at most what was in flight at the kill (checkpoints), never the whole entry; every token exactly one outcome"
shard=mckill
slow_multicast mcslow $shard 3000 mck ', "metrics_port": 0'
start_worker mck-a "$out/$shard.json"; a=$WORKER_PID
# Killed once an entry is partly recorded (a checkpoint: its progress bitmap exists) and its
# rest is still in flight (one connection of 5 streams answering 20 ms late: 250/s).
local inflight=""
if wait_until 60 sh -c "[ \$(redis-cli -p $redis_port HLEN 'progress:{$shard}') -ge 1 ]" \
   && wait_until 10 sh -c "curl -sf $(metrics_url mck-a)/metrics > '$out/$shard.metrics'"; then
  inflight=$(sed -n 's/^swiftpush_worker_in_flight \([0-9]*\)$/\1/p' "$out/$shard.metrics")
  kill -9 "$a"; wait "$a" 2>/dev/null || true
  start_worker mck-a "$out/$shard.json"; a=$WORKER_PID
  if wait_until 120 drained $shard; then
    sa=0; stop_worker "$a" || sa=$?
    read -r sent distinct <<< "$(sent_distinct $shard)"
    resent=$((sent - distinct))
    if [ "$sa" -eq 0 ] && check_multicast $shard "$out/$shard.tokens" 1000 mck > "$out/$shard.check" \
       && [ "$distinct" -eq 3000 ] && [ "$resent" -le "${inflight:-0}" ] && [ "$resent" -lt 1000 ]
    then ok "$name ($resent resent of $inflight in flight at the kill; $(cat "$out/$shard.check"))"
    else bad "$name (exit $sa; sent $sent, distinct $distinct, resent $resent, in flight at the kill $inflight; $(cat "$out/$shard.check" | tr '\n' ' '))"; fi
  else bad "$name (not drained after the restart: pending $(pending_count $shard))"; fi
else bad "$name (no checkpoint seen)"; fi
}

# Redis taken back to an older state under a running worker: what a failover to a replica that
# had not received the master's last writes does (Tests/worker/cluster.sh fails a real cluster
# over, but on loopback its replicas are never behind). Here Redis is restarted from a snapshot
# taken after the worker read an entry and before it checkpointed it: the checkpoint, its
# outcome records and the progress are gone, while the worker still holds the entry.
test_rollback() {
name="Redis rolled back under a worker (restarted from an older snapshot, as a failover to a lagging replica does): the checkpoint it took back is noticed at the final settle (settled short), the entry taken back and what lost its outcome sent again; every token exactly one outcome"
shard=rollback
slow_multicast rbslow $shard 2000 rb ', "metrics_port": 0'
start_worker rb-a "$out/$shard.json"; a=$WORKER_PID
checkpoints() { curl -sf "$(metrics_url rb-a)/metrics" | sed -n 's/^swiftpush_worker_checkpoints_total \([0-9]*\)$/\1/p'; }
local snapshot=0 before=""
# The snapshot: once the first entry is read (pending). The worker's checkpoint count once it is
# written: a checkpoint after that one is one the snapshot lacks (one between the fork and
# this count is lacked too, but not counted on).
if wait_until 30 pending_at_least $shard 1 && rcli BGSAVE > /dev/null \
   && wait_until 30 sh -c "redis-cli -p $redis_port INFO persistence | tr -d '\r' | grep -q '^rdb_bgsave_in_progress:0' \
                           && redis-cli -p $redis_port INFO persistence | tr -d '\r' | grep -q '^rdb_last_bgsave_status:ok'" \
   && wait_until 10 sh -c "curl -sf $(metrics_url rb-a)/metrics > /dev/null"; then
  before=$(checkpoints)
  [ -n "$before" ] && snapshot=1
fi
more_checkpoints() { local n; n=$(checkpoints); [ -n "$n" ] && [ "$n" -gt "$before" ]; }
# Then a checkpoint the snapshot lacks, and Redis killed and restarted from the snapshot (not
# its AOF, which has everything); AOF turned on again afterwards (rewritten from what it holds
# now) for later tests.
if [ "$snapshot" -eq 1 ] && wait_until 30 more_checkpoints; then
  kill -9 "$REDIS_PID"; wait "$REDIS_PID" 2>/dev/null || true
  redis-server --port "$redis_port" --bind 127.0.0.1 --dir "$out/redis" --appendonly no --save "" --protected-mode yes >> "$out/redis.log" 2>&1 &
  REDIS_PID=$!
  wait_until 30 sh -c "redis-cli -p $redis_port ping 2>/dev/null | grep -q PONG"
  local progress_after; progress_after=$(rcli HLEN "progress:{$shard}")
  rcli CONFIG SET appendonly yes > /dev/null
  wait_until 60 sh -c "redis-cli -p $redis_port INFO persistence | tr -d '\r' | grep -q '^aof_rewrite_in_progress:0' \
                       && redis-cli -p $redis_port INFO persistence | tr -d '\r' | grep -q '^aof_enabled:1'" || true
  if wait_until 120 drained $shard; then
    sa=0; stop_worker "$a" || sa=$?
    read -r sent distinct <<< "$(sent_distinct $shard)"
    local shorts; shorts=$(grep -c "settled short" "$out/rb-a.err" || true)
    if [ "$sa" -eq 0 ] && check_multicast $shard "$out/$shard.tokens" 1000 rb > "$out/$shard.check" \
       && [ "$distinct" -eq 2000 ] && [ "$shorts" -ge 1 ] && [ "$sent" -gt "$distinct" ]
    then ok "$name ($shorts short settles, $((sent - distinct)) sent again; $(cat "$out/$shard.check"))"
    else bad "$name (exit $sa; progress after the restart $progress_after; sent $sent, distinct $distinct, short settles $shorts; $(cat "$out/$shard.check" | tr '\n' ' '))"; fi
  else bad "$name (not drained after the rollback: pending $(pending_count $shard))"; fi
else bad "$name (no snapshot, or no checkpoint after it)"; fi
}

# ---------------------------------------------------------------------------------------------
# Batch entries (format 2, `notifications`): many single notifications in one entry.
test_batch_entries() {
name="batch entries (swiftpush enqueue of JSON lines, 500 per entry by default): 20000 notifications in 40 entries, 2 workers: every id exactly one outcome, each 410 its own, the 410 stream exact, the entries deleted; a line of another kind (a multicast) its own entry"
shard=batch
notifications $shard 20000 > "$out/$shard.jsonl"
config "$out/$shard.json" $shard "$mock_port"
# Lines that are entries of another kind go as they are: two plain lines and a multicast line
# make one batch entry and one multicast entry.
printf '%s\n' '{"id":"k-1","app":"demo","token":"'$good'","payload":{}}' \
  '{"v":"2","id":"k-m","app":"demo","tokens":"'$good,$gone1'","payload":{}}' '{"id":"k-2","app":"demo","token":"'$good'","payload":{}}' > "$out/$shard.kinds"
if "$cli" enqueue --redis "127.0.0.1:$redis_port" --shard $shard-kinds --file "$out/$shard.kinds" > "$out/$shard.enqueue" \
   && grep -q "^enqueued 4 notifications in 2 entries$" "$out/$shard.enqueue" && [ "$(rcli XLEN "push:{$shard-kinds}")" -eq 2 ] \
   && rcli XRANGE "push:{$shard-kinds}" - + | grep -q '^tokens$' \
   && "$cli" enqueue --redis "127.0.0.1:$redis_port" --shard $shard --file "$out/$shard.jsonl" > "$out/$shard.enqueue" \
   && grep -q "^enqueued 20000 notifications in 40 entries$" "$out/$shard.enqueue"; then
  start_worker batch-a "$out/$shard.json"; a=$WORKER_PID
  start_worker batch-b "$out/$shard.json"; b=$WORKER_PID
  if wait_until 120 drained $shard; then
    sa=0; sb=0; stop_worker "$a" || sa=$?; stop_worker "$b" || sb=$?
    if [ "$sa" -eq 0 ] && [ "$sb" -eq 0 ] && check $shard > "$out/$shard.check" && [ "$(rcli XLEN "push:{$shard}")" -eq 0 ] \
       && [ "$(rcli HGET "stats:{$shard}" enqueued)" -eq 20000 ] && [ "$(rcli HGET "stats:{$shard}" accepted)" -eq 19980 ]
    then ok "$name ($(cat "$out/$shard.check"); $(outcome_count $shard) outcomes stream entries)"
    else bad "$name (exit $sa/$sb; $(cat "$out/$shard.check" | tr '\n' ' '); stream $(rcli XLEN "push:{$shard}"))"; fi
  else bad "$name (not drained: pending $(pending_count $shard))"; fi
else bad "$name (enqueue: $(cat "$out/$shard.enqueue"))"; fi
}

test_campaign() {
name="campaigns: entries enqueued with --campaign (single, and a multicast of 300 tokens) echo it in their outcomes; outcomes --campaign shows theirs only; the workers count it in stats"
shard=camp
notifications $shard 40 > "$out/$shard.jsonl"
head -n 25 "$out/$shard.jsonl" > "$out/$shard.spring.jsonl"; tail -n 15 "$out/$shard.jsonl" > "$out/$shard.other.jsonl"
tokens_file "$out/$shard.tokens" 300
config "$out/$shard.json" $shard "$mock_port"
if "$cli" enqueue --batch 1 --redis "127.0.0.1:$redis_port" --shard $shard --file "$out/$shard.spring.jsonl" --campaign spring > /dev/null \
   && "$cli" enqueue --batch 1 --redis "127.0.0.1:$redis_port" --shard $shard --file "$out/$shard.other.jsonl" > /dev/null \
   && "$cli" enqueue --redis "127.0.0.1:$redis_port" --shard $shard --tokens "$out/$shard.tokens" --id campmc --app demo \
        --payload '{"aps":{"alert":"spring"}}' --campaign spring > /dev/null; then
  start_worker camp-a "$out/$shard.json"; a=$WORKER_PID
  if wait_until 60 drained $shard; then
    sa=0; stop_worker "$a" || sa=$?
    "$cli" outcomes --redis "127.0.0.1:$redis_port" --shard $shard --campaign spring --json > "$out/$shard.spring"
    "$cli" outcomes --redis "127.0.0.1:$redis_port" --shard $shard --campaign nobody > "$out/$shard.nobody"
    # Notifications: 25 singles + 300 tokens (accepted tokens of a multicast are one record with a count).
    spring=$(python3 -c 'import json, sys
n = 0
for line in open(sys.argv[1]):
    o = json.loads(line)
    assert o.get("campaign") == "spring", o
    n += int(o.get("count", 1))
print(n)' "$out/$shard.spring" 2>&1)
    counted=0
    for kind in accepted rejected failed; do
      n=$(rcli HGET "stats:{$shard}" "campaign:spring:$kind"); counted=$((counted + ${n:-0}))
    done
    if [ "$sa" -eq 0 ] && [ "$spring" = 325 ] && [ ! -s "$out/$shard.nobody" ] && [ "$counted" -eq 325 ] \
       && [ "$(rcli HGET "stats:{$shard}" campaign:spring:enqueued)" -eq 325 ]
    then ok "$name"
    else bad "$name (exit $sa; spring outcomes: $spring; stats: $counted; $(wc -l < "$out/$shard.nobody") for nobody)"; fi
  else bad "$name (not drained: pending $(pending_count $shard))"; fi
else bad "$name (enqueue failed)"; fi
}

# ---------------------------------------------------------------------------------------------
test_app_options() {
name="an app's connection options from the options table reach its client: \"connections\": 3 opens 3 connections to the mock (the table's default is 2), plus the fast lane's one (4 in all), and \"max_streams\": 1 keeps one stream open on each (a key the worker dropped before it built apps through the table); every line of the worker's log is logfmt with an RFC 3339 UTC time"
shard=appopts
mock_start opts "$cli" "$pki" --control-port-file "$out/opts.port" --lenient-initial-limit
local opts_port=$MOCK_PORT
wait_until 10 test -s "$out/opts.port" || { bad "$name (mock without control port)"; return; }
cat > "$out/$shard.json" <<JSON
{"redis": {"host": "127.0.0.1", "port": $redis_port}, "shard": "$shard",
 "apps": {"demo": {"key_file": "$pki/AuthKey_TESTKEY001.p8", "key_id": "TESTKEY001", "team_id": "TEAM123456",
                   "host": "localhost", "port": $opts_port, "ca_file": "$pki/ca.pem", "topics": ["com.example.app"],
                   "connections": 3, "max_streams": 1}}}
JSON
notifications $shard 300 | grep -v '"token": "0000' > "$out/$shard.jsonl"
"$cli" enqueue --batch 1 --redis "127.0.0.1:$redis_port" --shard $shard --file "$out/$shard.jsonl" > /dev/null
total=$(wc -l < "$out/$shard.jsonl")
start_worker opts-a "$out/$shard.json"; a=$WORKER_PID
local connections="?" peak="?" sa=0
if wait_until 120 has_outcomes $shard "$total"; then
  stop_worker "$a" || sa=$?
  curl -s "http://127.0.0.1:$(cat "$out/opts.port")/stats" > "$out/opts.stats"
  connections=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["connections"])' "$out/opts.stats")
  peak=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["peak_concurrent_streams"])' "$out/opts.stats")
  # One format for every line: logfmt, the time first (RFC 3339, UTC, milliseconds).
  local others; others=$(grep -cvE '^ts=[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z level=(info|warning|error) msg=' "$out/opts-a.err" || true)
  if [ "$sa" -eq 0 ] && [ "$connections" = 4 ] && [ "$peak" = 1 ] && [ "$others" -eq 0 ] && grep -q 'msg="worker started" consumer=opts-a' "$out/opts-a.err" \
     && grep -q 'msg=stopped .*accepted=[1-9]' "$out/opts-a.err"
  then ok "$name"
  else bad "$name (exit $sa, $connections connections, at most $peak streams at once on one, $others lines not logfmt)"; fi
else bad "$name (only $(outcome_count $shard) outcomes)"; fi
}

# ---------------------------------------------------------------------------------------------
# Issue 31: a delivery counts toward max_deliveries only when a request of the entry was written
# (docs/worker.md, "Dead letters"). Lives killed while APNs cannot be reached (a listener that
# takes the TCP connection and never answers the TLS handshake) wrote nothing: before, each of
# their counted deliveries brought healthy entries nearer a dead letter.
# delivery_sum SHARD: the sum of the delivery counts of the shard's pending entries.
delivery_sum() { rcli XPENDING "push:{$1}" senders - + 10000 | awk 'NR % 4 == 0 { s += $1 } END { print s + 0 }'; }
delivery_sum_above() { [ "$(delivery_sum "$1")" -gt "$2" ]; }
written_above() { [ "$(rcli HGET "written:{$1}" "$2")" -gt "$3" ] 2>/dev/null; }
test_unwritten_lives() {
name="10 lives SIGKILLed while APNs cannot be reached (nothing written; max_deliveries 2) dead-letter no entry, and a poison entry that kills its worker once written still ends DeadLetter: every id one outcome"
shard=unwritten
local n=5 kills=0 sum silent silent_port lport poison before summary lives=0 p
# Healthy entries, then the poison one (the mock never answers its token; each life is killed
# once its written delivery is recorded).
python3 -c 'import json
for i in range(5): print(json.dumps({"id": f"unwritten-{i}", "app": "demo", "token": "ee%062x" % (i + 1), "payload": {"aps": {"alert": "x"}}}))
print(json.dumps({"id": "poison", "app": "demo", "token": "dd" * 32, "payload": {"aps": {"alert": "x"}}}))' > "$out/$shard.jsonl"
python3 -c 'import socket, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(64)
open(sys.argv[1] + ".tmp", "w").write(str(s.getsockname()[1])); __import__("os").rename(sys.argv[1] + ".tmp", sys.argv[1])
held = []
while True: held.append(s.accept()[0])' "$out/silent.port" &
silent=$!; WORKER_PIDS+=("$silent")
wait_until 10 test -s "$out/silent.port" || { bad "$name (no silent listener)"; return; }
silent_port=$(cat "$out/silent.port")
local opts=', "deadline_ms": 20000, "max_sends": 1, "min_idle_ms": 120000, "max_deliveries": 2'
config "$out/$shard.silent.json" $shard "$silent_port" "$opts"
"$cli" enqueue --batch 1 --redis "127.0.0.1:$redis_port" --shard $shard --file "$out/$shard.jsonl" > /dev/null
poison=$(rcli XREVRANGE "push:{$shard}" + - COUNT 1 | head -1)
sum=0
while [ "$kills" -lt 10 ]; do
  start_worker unwritten-a "$out/$shard.silent.json"; a=$WORKER_PID
  # Killed once this life counted a delivery (the first: its read; later: a paced group).
  if [ "$kills" -eq 0 ]; then wait_until 30 pending_at_least $shard $((n + 1)) || { bad "$name (life 1 read nothing)"; kill -9 "$a"; return; }
  else wait_until 30 delivery_sum_above $shard "$sum" || { bad "$name (life $((kills + 1)) counted no delivery)"; kill -9 "$a"; return; }; fi
  kill -9 "$a"; wait "$a" 2>/dev/null || true
  kills=$((kills + 1)); sum=$(delivery_sum $shard)
done
kill "$silent"; wait "$silent" 2>/dev/null || true
local highest; highest=$(rcli XPENDING "push:{$shard}" senders - + 100 | awk 'NR % 4 == 0 && $1 > m { m = $1 } END { print m + 0 }')
local recorded; recorded=$(rcli HLEN "written:{$shard}")
mock_start unwritten "$cli" "$pki" --lenient-initial-limit --stall-token "$(printf 'dd%.0s' $(seq 32))"; lport=$MOCK_PORT
config "$out/$shard.json" $shard "$lport" "$opts"
# The poison's lives: each ends (SIGKILL) once its written delivery is recorded; then one more.
while [ "$lives" -lt 6 ] && [ "$(outcome_count $shard)" -lt $((n + 1)) ]; do
  before=$(rcli HGET "written:{$shard}" "$poison"); before=${before:-0}
  start_worker unwritten-a "$out/$shard.json"; a=$WORKER_PID
  wait_until 30 sh -c "[ \"\$(redis-cli -p $redis_port HGET 'written:{$shard}' '$poison')\" -gt $before ] 2>/dev/null || [ \"\$(redis-cli -p $redis_port XLEN 'outcomes:{$shard}')\" -ge $((n + 1)) ]" || true
  if [ "$(outcome_count $shard)" -ge $((n + 1)) ]; then break; fi
  kill -9 "$a"; wait "$a" 2>/dev/null || true
  lives=$((lives + 1))
done
if ! kill -0 "$a" 2>/dev/null; then start_worker unwritten-a "$out/$shard.json"; a=$WORKER_PID; fi
if wait_until 40 drained $shard; then
  sa=0; stop_worker "$a" || sa=$?
  "$cli" outcomes --redis "127.0.0.1:$redis_port" --shard $shard --json > "$out/$shard.outcomes"
  summary=$(python3 - "$out/$shard.jsonl" "$out/$shard.outcomes" <<'PY' 2>&1
import collections, json, sys
ids = [json.loads(l)["id"] for l in open(sys.argv[1])]
rows = [json.loads(l) for l in open(sys.argv[2])]
by = collections.Counter(r["id"] for r in rows)
assert sorted(by) == sorted(ids) and set(by.values()) == {1}, by
kinds = {r["id"]: (r["outcome"], r["reason"]) for r in rows}
assert kinds["poison"] == ("FAILED", "DeadLetter"), kinds["poison"]
assert all(kinds[i] == ("ACCEPTED", "") for i in ids if i != "poison"), kinds
poison = next(r for r in rows if r["id"] == "poison")
print(f"healthy highest deliveries {max(r['deliveries'] for r in rows if r['id'] != 'poison')}; poison: {poison['detail'][:60]}...")
PY
  ) && ok_check=1 || ok_check=0
  if [ "$sa" -eq 0 ] && [ "$ok_check" -eq 1 ] && [ "$highest" -gt 2 ] && [ "$recorded" -eq 0 ] && [ "$(rcli HLEN "written:{$shard}")" -eq 0 ]; then
    ok "$name ($kills kills unreachable, highest count then $highest; $lives poison lives; $summary)"
  else bad "$name (exit $sa; highest count after the unreachable lives $highest, written records then $recorded, now $(rcli HLEN "written:{$shard}"); $summary)"; fi
else bad "$name (not drained: pending $(pending_count $shard), outcomes $(outcome_count $shard))"; fi
}

# ---------------------------------------------------------------------------------------------
# The fast lane (issue 32, item 1): push:{s}:fast, read first on every read, with a share of
# max_in_flight that bulk entries cannot take.
# accepted_at_least SHARD N: the shard's counters hold N accepted notifications.
accepted_at_least() { [ "$(rcli HGET "stats:{$1}" accepted 2>/dev/null || echo 0)" -ge "$2" ] 2>/dev/null; }
test_fast_lane() {
name="fast lane: singles enqueued on it while 50,000 multicast notifications (100 entries x 500) drain are recorded long before the backlog ends, their requests on a connection of their own (the app's fast client: no bulk request ever on it, so none queued ahead); the same singles on the bulk lane wait behind all of it"
shard=fl
# A mock of its own that records every request with its connection; the app's bulk client has
# one connection, its fast client one more.
mock_start fastrec "$cli" "$pki" --record --control-port-file "$out/fastrec.port" --lenient-initial-limit
local fl_port=$MOCK_PORT
wait_until 10 test -s "$out/fastrec.port" || { bad "$name (mock without control port)"; return; }
tokens_file "$out/$shard.tokens" 50000
config "$out/$shard.json" $shard "$fl_port"
sed -i 's/"topics": \["com.example.app"\]}/"topics": ["com.example.app"], "connections": 1}/g' "$out/$shard.json"
python3 - "$out/$shard" <<'PY'
import json, sys
for lane, prefix in (("fast", "ab"), ("bulk", "ac")):
    with open(f"{sys.argv[1]}.{lane}.jsonl", "w") as f:
        for i in range(5):
            f.write(json.dumps({"id": f"{lane}-{i}", "app": "demo", "token": prefix + "%062x" % (i + 1),
                                "payload": {"aps": {"alert": f"{lane} {i}"}}}) + "\n")
PY
if "$cli" enqueue --redis "127.0.0.1:$redis_port" --shard $shard --tokens "$out/$shard.tokens" --id fl --app demo \
     --payload '{"aps":{"alert":"campaign"}}' --per-entry 500 > "$out/$shard.enqueue"; then
  start_worker fl-a "$out/$shard.json"; a=$WORKER_PID
  # A tenth of the backlog recorded: the singles go in, single entries (--batch 1), both lanes at once.
  if wait_until 120 accepted_at_least $shard 5000 \
     && "$cli" enqueue --batch 1 --lane fast --redis "127.0.0.1:$redis_port" --shard $shard --file "$out/$shard.fast.jsonl" > /dev/null \
     && "$cli" enqueue --batch 1 --lane bulk --redis "127.0.0.1:$redis_port" --shard $shard --file "$out/$shard.bulk.jsonl" > /dev/null \
     && wait_until 120 drained $shard; then
    sa=0; stop_worker "$a" || sa=$?
    "$cli" outcomes --redis "127.0.0.1:$redis_port" --shard $shard --json > "$out/$shard.outcomes"
    curl -s "http://127.0.0.1:$(cat "$out/fastrec.port")/record" > "$out/$shard.record"
    # Per single: how many backlog notifications were recorded before it (outcomes in stream
    # order). The mock's records: the connections the fast singles' requests came on carry no
    # backlog request (before the fast lane had a client of its own, all shared the app's one
    # connection, queued behind up to max_in_flight - fast_reserve bulk requests); printed, the
    # backlog requests the mock received between a fast single's XADD (its entry id, Redis's
    # clock) and its request.
    verdict=$(python3 - "$out/$shard.outcomes" "$out/$shard.record" <<'PY'
import json, sys
before, at, added = 0, {}, {}
for line in open(sys.argv[1]):
    o = json.loads(line)
    if o["id"].startswith("fl#"):
        before += o.get("count", 1)
    else:
        at[o["id"]] = before
        if o.get("token") and o.get("entry"):
            added[o["token"]] = int(o["entry"].lstrip("f").split("-")[0]) * 1000
fast = [at.get(f"fast-{i}") for i in range(5)]
bulk = [at.get(f"bulk-{i}") for i in range(5)]
records = json.load(open(sys.argv[2]))
backlog = [r for r in records if r["device_token"].startswith("ee")]
singles = [r for r in records if r["device_token"].startswith("ab")]
shared = {r["connection"] for r in singles} & {r["connection"] for r in backlog}
ahead = [sum(1 for b in backlog if added.get(r["device_token"], 0) <= b["received_us"] < r["received_us"]) for r in singles]
good = (before == 50000 and None not in fast + bulk and max(fast) <= 25000 and min(bulk) >= 40000
        and len(singles) == 5 and len(backlog) >= 50000 and not shared)
print(("yes" if good else "no") + f" backlog {before}; recorded before each fast single: {fast}; before each bulk-lane single: {bulk}; "
      f"fast requests on connections {sorted({r['connection'] for r in singles})}, backlog on {sorted({r['connection'] for r in backlog})}; "
      f"backlog requests received between a fast single's XADD and its request: {ahead}")
PY
)
    if [ "$sa" -eq 0 ] && [ "${verdict%% *}" = yes ] && [ "$(rcli XLEN "push:{$shard}:fast")" -eq 0 ]; then ok "$name (${verdict#* })"
    else bad "$name (exit $sa; ${verdict#* }; fast stream $(rcli XLEN "push:{$shard}:fast"))"; fi
  else kill -9 "$a" 2>/dev/null || true; bad "$name (not drained: accepted $(rcli HGET "stats:{$shard}" accepted), pending $(pending_count $shard))"; fi
else bad "$name (enqueue: $(cat "$out/$shard.enqueue"))"; fi
}

test_fast_takeback() {
name="fast lane after a SIGKILL: a worker restarted under its name takes back its pending entries of both lanes (300 fast, 300 bulk, answers 1.5 s late): every id exactly one outcome, nothing pending in either lane"
late_mock
shard=ftb
notifications $shard 600 > "$out/$shard.jsonl"
head -n 300 "$out/$shard.jsonl" > "$out/$shard.bulk.jsonl"
tail -n 300 "$out/$shard.jsonl" > "$out/$shard.fast.jsonl"
config "$out/$shard.json" $shard "$late_port" ', "max_in_flight": 5000, "deadline_ms": 5000, "max_sends": 2, "min_idle_ms": 120000'
"$cli" enqueue --batch 1 --redis "127.0.0.1:$redis_port" --shard $shard --file "$out/$shard.bulk.jsonl" > /dev/null
"$cli" enqueue --batch 1 --lane fast --redis "127.0.0.1:$redis_port" --shard $shard --file "$out/$shard.fast.jsonl" > /dev/null
start_worker $shard-a "$out/$shard.json"; a=$WORKER_PID
fast_pending() { [ "$(rcli XPENDING "push:{$shard}:fast" senders 2>/dev/null | head -1)" -ge 300 ] 2>/dev/null; }
if wait_until 60 pending_at_least $shard 300 && wait_until 60 fast_pending; then
  kill -9 "$a"; wait "$a" 2>/dev/null || true
  : > "$out/$shard-a.err"
  start_worker $shard-a "$out/$shard.json"; a=$WORKER_PID
  taken=""
  if wait_until 60 drained $shard; then
    sa=0; stop_worker "$a" || sa=$?
    taken=$(sed -n 's/.*re-read own pending entries.* taken=\([0-9]*\).*/\1/p' "$out/$shard-a.err" | head -n 1)
    if [ "$sa" -eq 0 ] && [ "${taken:-0}" -ge 600 ] && check $shard none > "$out/$shard.check" \
       && [ "$(rcli XLEN "push:{$shard}:fast")" -eq 0 ] && [ "$(rcli HLEN "written:{$shard}")" -eq 0 ]; then
      ok "$name (taken back $taken; $(head -c 200 "$out/$shard.check"))"
    else bad "$name (exit $sa, taken back ${taken:-none}; $(head -c 300 "$out/$shard.check"); fast stream $(rcli XLEN "push:{$shard}:fast"))"; fi
  else kill -9 "$a" 2>/dev/null || true; bad "$name (not drained after the restart: pending $(pending_count $shard), fast $(rcli XPENDING "push:{$shard}:fast" senders | head -1))"; fi
else kill -9 "$a" 2>/dev/null || true; bad "$name (never held both lanes)"; fi
}

# ---------------------------------------------------------------------------------------------
# Scheduled sending (issue 32, item 5): send_at (enqueue --at) holds entries in the delayed set.
test_schedule() {
name="schedule: entries enqueued with --at 2 s ahead (a single, a batch of 3, a fast-lane single) wait in the delayed set, no request reaches APNs before send_at, each outcome within 1 s after it; --at in the past is refused and enqueues nothing"
shard=sch
config "$out/$shard.json" $shard "$mock_port"
python3 - "$out/$shard" <<'PY'
import json, sys
for name, ids in (("single", ["sch-0"]), ("batch", ["sch-1", "sch-2", "sch-3"]), ("fast", ["sch-4"])):
    with open(f"{sys.argv[1]}.{name}.jsonl", "w") as f:
        for i in ids:
            f.write(json.dumps({"id": i, "app": "demo", "token": "5c%062x" % int(i[4:]), "payload": {"aps": {"alert": i}}}) + "\n")
PY
cat "$out/$shard.single.jsonl" "$out/$shard.batch.jsonl" "$out/$shard.fast.jsonl" > "$out/$shard.jsonl"
start_worker sch-a "$out/$shard.json"; a=$WORKER_PID
past_err=$("$cli" enqueue --at 2020-01-01T00:00:00Z --redis "127.0.0.1:$redis_port" --shard $shard --file "$out/$shard.single.jsonl" 2>&1 > /dev/null) && past_status=0 || past_status=$?
at=$(python3 -c 'import datetime, time; print(datetime.datetime.fromtimestamp(time.time() + 2, datetime.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z"))')
send_at=$(python3 -c 'import datetime, sys; print(int(datetime.datetime.fromisoformat(sys.argv[1].replace("Z", "+00:00")).timestamp() * 1000))' "$at")
"$cli" enqueue --at "$at" --batch 1 --redis "127.0.0.1:$redis_port" --shard $shard --file "$out/$shard.single.jsonl" > /dev/null
"$cli" enqueue --at "$at" --redis "127.0.0.1:$redis_port" --shard $shard --file "$out/$shard.batch.jsonl" > /dev/null
"$cli" enqueue --at "$at" --batch 1 --lane fast --redis "127.0.0.1:$redis_port" --shard $shard --file "$out/$shard.fast.jsonl" > /dev/null
delayed_count() { [ "$(rcli ZCARD "delayed:{$shard}")" -ge 3 ]; }
held=no; wait_until 10 delayed_count && [ "$(python3 -c 'import time; print(int(time.time() * 1000))')" -lt "$send_at" ] && held=yes
if wait_until 30 drained $shard && [ "$(outcome_count $shard)" -ge 3 ]; then
  sa=0; stop_worker "$a" || sa=$?
  "$cli" outcomes --redis "127.0.0.1:$redis_port" --shard $shard --json > "$out/$shard.outcomes"
  curl -s "$control/record" > "$out/$shard.record.json"
  verdict=$(python3 - "$out/$shard.outcomes" "$out/$shard.record.json" "$send_at" <<'PY'
import json, sys
send_at = int(sys.argv[3])
outcomes = [json.loads(l) for l in open(sys.argv[1])]
record = json.load(open(sys.argv[2]))
first = {}
for r in record:
    t = r.get("device_token", "")
    if t.startswith("5c"):
        first[int(t[2:], 16)] = min(first.get(int(t[2:], 16), 1 << 62), r["received_us"])
late = {o["id"]: int(o["stream_id"].split("-")[0]) - send_at for o in outcomes}
early = [k for k, us in first.items() if us // 1000 < send_at]
ok = sorted(first) == [0, 1, 2, 3, 4] and not early and sorted(late) == [f"sch-{i}" for i in range(5)] \
     and all(0 <= v <= 1000 for v in late.values()) and all(o["outcome"] == "ACCEPTED" for o in outcomes)
print(("yes" if ok else "no") + f" requests {len(first)} (before send_at: {len(early)}), outcome ms after send_at {sorted(late.values())}")
PY
)
  if [ "$sa" -eq 0 ] && [ "$held" = yes ] && [ "${verdict%% *}" = yes ] && [ "$past_status" -ne 0 ] && grep -q "in the past" <<< "$past_err" \
     && check $shard none > /dev/null; then ok "$name (${verdict#* }; the past: $past_err)"
  else bad "$name (exit $sa; held in the delayed set before send_at: $held; ${verdict#* }; --at in the past: status $past_status, $past_err)"; fi
else kill -9 "$a" 2>/dev/null || true; bad "$name (not drained: delayed $(rcli ZCARD "delayed:{$shard}"), outcomes $(outcome_count $shard))"; fi
}
source Tests/worker/campaign_control.sh
source Tests/worker/unblocked.sh

# Every test, in order; WORKER_TESTS="crash redis_restart" runs only those. Names joined by "+"
# run together, in that order (outcomes_cli reads what bad_entries recorded).
all_tests="end_to_end outcome_format_2 multicast multicast_kill batch_entries campaign failed_settle_write crash sigterm sigterm_takeback short_drain dead_letter bad_entries+outcomes_cli
  delayed_retry unknown_results redis_restart redis_restart_held crash_loop crash_loop_late completion_stale_lag
  redis_unreachable tenant_isolation apns_events configuration_errors rollback library_links app_options redis_loading unwritten_lives
  fast_lane fast_takeback schedule
  campaign_cancel campaign_cancel_kill campaign_pause campaign_bad_input campaign_throttle
  redis_unblocked"
# WORKER_PART=K/N: the Kth of N parts (every Nth test from the Kth), each with its own Redis and
# mock, so that Tests/worker/run-parts.sh runs N at once: most of these tests wait (answers made
# late, workers killed and restarted, drains) rather than compute (issue 34, item 6).
units=(${WORKER_TESTS:-$all_tests})
if [ -n "${WORKER_PART:-}" ]; then
  part=${WORKER_PART%/*} parts=${WORKER_PART#*/}
  mine=()
  for i in "${!units[@]}"; do [ $((i % parts)) -ne $((part - 1)) ] || mine+=("${units[$i]}"); done
  units=("${mine[@]}")
fi
for t in $(printf '%s\n' "${units[@]}" | tr '+' ' '); do
  declare -F "test_$t" > /dev/null || { bad "no test named $t (tests: $(echo $all_tests | tr '+' ' '))"; continue; }
  started=$SECONDS
  "test_$t"
  # Where the suite's time goes (issue 34, item 6): every test's wall time, after its line.
  echo "  ($t: $((SECONDS - started)) s)"
done

echo "worker: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
