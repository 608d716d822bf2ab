#!/usr/bin/env bash
# End-to-end tests of `swiftpush worker` (issue 15): a real redis-server on a free loopback port
# (AOF on), the project's mock APNs server (TLS + HTTP/2), the CLI's enqueue and outcomes.
# usage: Tests/worker/run.sh BUILD_DIR [COUNT]   (COUNT: entries of the end-to-end test, 100000)
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
redis-server --port "$redis_port" --bind 127.0.0.1 --dir "$out/redis" --appendonly yes --appendfsync always \
  --save "" --protected-mode yes > "$out/redis.log" 2>&1 &
REDIS_PID=$!
wait_until 20 sh -c "redis-cli -p $redis_port ping 2>/dev/null | grep -q PONG" || { cat "$out/redis.log"; echo "redis did not start"; exit 1; }

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
name="end to end: $count entries, 2 workers: every id exactly one outcome, nothing pending, the 410 stream exact"
shard=e2e
notifications $shard "$count" > "$out/$shard.jsonl"
config "$out/$shard.json" $shard "$mock_port"
if "$cli" enqueue --redis "127.0.0.1:$redis_port" --shard $shard --file "$out/$shard.jsonl" > "$out/enqueue.out" \
   && grep -q "^enqueued $count$" "$out/enqueue.out"; then
  t0=$(date +%s.%N)
  start_worker e2e-a "$out/$shard.json"; a=$WORKER_PID
  start_worker e2e-b "$out/$shard.json"; b=$WORKER_PID
  if wait_until 300 has_outcomes $shard "$count"; then
    t1=$(date +%s.%N)
    sa=0; stop_worker "$a" || sa=$?
    sb=0; stop_worker "$b" || sb=$?
    if [ "$sa" -eq 0 ] && [ "$sb" -eq 0 ] && [ "$(pending_count $shard)" -eq 0 ] && check $shard \
       && grep -q "accepted=[1-9]" "$out/e2e-a.err" && grep -q "accepted=[1-9]" "$out/e2e-b.err"; then
      ok "$name ($(python3 -c "print(f'{$count / ($t1 - $t0):.0f}')") notifications/s end to end, debug build)"
    else bad "$name (exit statuses $sa $sb, pending $(pending_count $shard))"; fi
  else bad "$name (only $(outcome_count $shard) outcomes)"; fi
else bad "$name (enqueue)"; fi

# ---------------------------------------------------------------------------------------------
name="outcome format 2: 20000 entries, 2 workers: one outcomes entry per batch, every id exactly one outcome in them, the 410 stream exact"
shard=f2
notifications $shard 20000 > "$out/$shard.jsonl"
config "$out/$shard.json" $shard "$mock_port" ', "outcome_format": 2'
if "$cli" enqueue --redis "127.0.0.1:$redis_port" --shard $shard --file "$out/$shard.jsonl" > /dev/null; then
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

# ---------------------------------------------------------------------------------------------
# A settle script whose write fails midway (Redis keeps a script's earlier writes): the 410
# stream's key holds a string, so recording a 410 fails with WRONGTYPE until it is deleted.
# Nothing settled before the failure may lose its outcome, nothing may be recorded twice.
for format in 1 2; do
  name="a settle write that fails (outcome format $format, WRONGTYPE on the 410 stream until fixed): every id exactly one outcome, the 410 stream exact"
  shard=broken$format
  notifications $shard 3000 > "$out/$shard.jsonl"
  config "$out/$shard.json" $shard "$mock_port" ", \"outcome_format\": $format"
  rcli SET "unregistered:{$shard}" not-a-stream > /dev/null
  if "$cli" enqueue --redis "127.0.0.1:$redis_port" --shard $shard --file "$out/$shard.jsonl" > /dev/null; then
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

# ---------------------------------------------------------------------------------------------
name="crash: one of 2 workers killed with SIGKILL 3 times mid-run: every id exactly one outcome, its entries reclaimed"
shard=crash
n=$((count / 2))
notifications $shard "$n" > "$out/$shard.jsonl"
# deadline 1 s x 2 sends + 0.5 s back-off = 2.5 s longest delivery; min-idle 4 s exceeds it.
config "$out/$shard.json" $shard "$mock_port" ', "deadline_ms": 1000, "max_sends": 2, "min_idle_ms": 4000, "max_in_flight": 2000'
curl -s -X POST "$control/record/reset" > /dev/null
"$cli" enqueue --redis "127.0.0.1:$redis_port" --shard $shard --file "$out/$shard.jsonl" > /dev/null
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
    # time it stays dead, and the other worker must reclaim what it held (XAUTOCLAIM).
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

# ---------------------------------------------------------------------------------------------
name="SIGTERM: stops reading, drains what is in flight, exits 0 with nothing pending; a restart finishes the rest exactly once"
shard=term
n=5000
notifications $shard $n > "$out/$shard.jsonl"
config "$out/$shard.json" $shard "$slow_port" ', "max_in_flight": 1000, "drain_ms": 20000'
"$cli" enqueue --redis "127.0.0.1:$redis_port" --shard $shard --file "$out/$shard.jsonl" > /dev/null
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

# ---------------------------------------------------------------------------------------------
name="SIGTERM with a drain too short for what is in flight: exit 1, the rest left pending (not acknowledged), a restart under the same name finishes it exactly once"
shard=short
n=3000
notifications $shard $n > "$out/$shard.jsonl"
config "$out/$shard.json" $shard "$slow_port" ', "max_in_flight": 1000, "drain_ms": 100'
"$cli" enqueue --redis "127.0.0.1:$redis_port" --shard $shard --file "$out/$shard.jsonl" > /dev/null
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

# ---------------------------------------------------------------------------------------------
name="an entry delivered more than max_deliveries times is dead-lettered, whether reclaimed or re-read as our own"
shard=dead
config "$out/$shard.json" $shard "$mock_port" ', "deadline_ms": 1000, "max_sends": 1, "min_idle_ms": 2000, "max_deliveries": 5'
rcli XGROUP CREATE "push:{$shard}" senders 0 MKSTREAM > /dev/null
ghost=$(rcli XADD "push:{$shard}" '*' id ghost app demo token "$good" payload '{"aps":{}}')
mine=$(rcli XADD "push:{$shard}" '*' id mine app demo token "$good" payload '{"aps":{}}')
fine=$(rcli XADD "push:{$shard}" '*' id fine app demo token "$good" payload '{"aps":{}}')
# Pending with a dead consumer for long, and with this worker's own name, each delivered 9 times.
rcli XCLAIM "push:{$shard}" senders ghost 0 "$ghost" IDLE 600000 RETRYCOUNT 9 FORCE > /dev/null
rcli XCLAIM "push:{$shard}" senders dead-a 0 "$mine" IDLE 0 RETRYCOUNT 9 FORCE > /dev/null
start_worker dead-a "$out/$shard.json"; a=$WORKER_PID
if wait_until 60 has_outcomes $shard 3 && stop_worker "$a" && [ "$(pending_count $shard)" -eq 0 ]; then
  "$cli" outcomes --redis "127.0.0.1:$redis_port" --shard $shard --json > "$out/$shard.outcomes"
  if python3 - "$out/$shard.outcomes" <<'PY'
import json, sys
rows = {r["id"]: r for r in map(json.loads, open(sys.argv[1]))}
assert len(rows) == 3, rows
for nid in ("ghost", "mine"):
    r = rows[nid]
    assert (r["outcome"], r["reason"]) == ("FAILED", "DeadLetter") and r["deliveries"] >= 10 and "apns_id" not in r, r
assert rows["fine"]["outcome"] == "ACCEPTED", rows["fine"]
PY
  then ok "$name"; else bad "$name"; fi
else bad "$name (outcomes $(outcome_count $shard), pending $(pending_count $shard))"; fi

# ---------------------------------------------------------------------------------------------
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
"$cli" enqueue --redis "127.0.0.1:$redis_port" --shard $shard --file "$out/$shard.in" > /dev/null
rcli XADD "push:{$shard}" '*' id twice id twice app demo token "$good" payload '{"aps":{}}' > /dev/null
start_worker bad-a "$out/$shard.json"; a=$WORKER_PID
metrics_ok=no
if wait_until 60 has_outcomes $shard 15 && wait_until 10 grep -q "metrics on http://" "$out/bad-a.err"; then
  metrics=$(sed -n 's|.*metrics on \(http://[0-9.:]*\)/metrics.*|\1|p' "$out/bad-a.err")
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

# ---------------------------------------------------------------------------------------------
name="a 429 goes to the delayed set and comes back when due: one ACCEPTED outcome once the device calms down"
shard=delay
busy=00000000000000000000000000000000000000000000000000000000000000b1
mock_start busy "$cli" "$pki" --too-many-requests "$busy" --control-port-file "$out/busy.port" --lenient-initial-limit
busy_port=$MOCK_PORT
wait_until 10 test -s "$out/busy.port"
config "$out/$shard.json" $shard "$busy_port" ', "delayed_retry_ms": 300, "max_delayed_retries": 3'
printf '{"id":"calm","app":"demo","token":"%s","payload":{"aps":{"alert":"later"}}}\n' "$busy" > "$out/$shard.jsonl"
printf '{"id":"other","app":"demo","token":"%s","payload":{"aps":{"alert":"now"}}}\n' "$good" >> "$out/$shard.jsonl"
"$cli" enqueue --redis "127.0.0.1:$redis_port" --shard $shard --file "$out/$shard.jsonl" > /dev/null
start_worker delay-a "$out/$shard.json"; a=$WORKER_PID
# The first 429 parks the entry (acknowledged, in delayed:{delay}); the device then calms down.
if wait_until 60 sh -c "[ \$(redis-cli -p $redis_port XLEN 'push:{$shard}') -ge 3 ]" \
   && curl -s -d '{}' "http://127.0.0.1:$(cat "$out/busy.port")/faults" > /dev/null \
   && wait_until 60 has_outcomes $shard 2 && stop_worker "$a" && [ "$(pending_count $shard)" -eq 0 ] \
   && [ "$(rcli ZCARD "delayed:{$shard}")" -eq 0 ] && check $shard none \
   && grep -q "delayed=[1-9]" "$out/delay-a.err" && grep -q "promoted=[1-9]" "$out/delay-a.err"
then ok "$name ($(rcli XLEN "push:{$shard}") stream entries for 2 notifications)"
else bad "$name (outcomes $(outcome_count $shard), stream $(rcli XLEN "push:{$shard}"))"; fi

# ---------------------------------------------------------------------------------------------
name="unknown results (the mock never answers every 10th request): resent by default, or recorded FAILED maybe_delivered"
mock_start stall "$cli" "$pki" --stall-every 10 --lenient-initial-limit
stall_port=$MOCK_PORT
unknown_ok=yes
for policy in resend record; do
  shard=unknown-$policy
  notifications $shard 2000 | grep -v '"token": "0000' > "$out/$shard.jsonl"
  config "$out/$shard.json" $shard "$stall_port" ", \"deadline_ms\": 1000, \"unknown_results\": \"$policy\", \"max_sends\": 5"
  "$cli" enqueue --redis "127.0.0.1:$redis_port" --shard $shard --file "$out/$shard.jsonl" > /dev/null
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

# ---------------------------------------------------------------------------------------------
name="Redis killed mid-run and restarted from its AOF: the worker reconnects by itself; every id exactly one outcome"
shard=restart
n=$((count / 5))
notifications $shard "$n" > "$out/$shard.jsonl"
config "$out/$shard.json" $shard "$mock_port"
"$cli" enqueue --redis "127.0.0.1:$redis_port" --shard $shard --file "$out/$shard.jsonl" > /dev/null
start_worker restart-a "$out/$shard.json"; a=$WORKER_PID
if wait_until 60 has_outcomes $shard $((n / 5)); then
  kill -9 "$REDIS_PID"; wait "$REDIS_PID" 2>/dev/null || true
  redis-server --port "$redis_port" --bind 127.0.0.1 --dir "$out/redis" --appendonly yes --appendfsync always \
    --save "" --protected-mode yes >> "$out/redis.log" 2>&1 &
  REDIS_PID=$!
  if wait_until 30 sh -c "redis-cli -p $redis_port ping 2>/dev/null | grep -q PONG" \
     && wait_until 120 has_outcomes $shard "$n" && stop_worker "$a" && [ "$(pending_count $shard)" -eq 0 ] && check $shard \
     && grep -q "redis_reconnects=[1-9]" "$out/restart-a.err"
  then ok "$name ($(sed -n 's/.* redis_reconnects=\([0-9]*\).*/\1/p' "$out/restart-a.err" | tail -n 1) reconnect(s))"
  else bad "$name (outcomes $(outcome_count $shard), pending $(pending_count $shard))"; fi
else bad "$name (no progress before the kill)"; fi

# ---------------------------------------------------------------------------------------------
name="SIGTERM while Redis is unreachable: the worker stops retrying and exits within the drain time"
nowhere=$(free_port)
sed "s/\"port\": $redis_port}/\"port\": $nowhere}/" "$out/e2e.json" | sed 's/"reclaim_interval_ms": 500/"reclaim_interval_ms": 500, "drain_ms": 1000/' > "$out/nowhere.json"
start_worker nowhere "$out/nowhere.json"; a=$WORKER_PID
if wait_until 20 grep -q "cannot reach Redis" "$out/nowhere.err"; then
  t0=$SECONDS
  st=0; stop_worker "$a" || st=$?
  if [ "$st" -eq 0 ] && [ $((SECONDS - t0)) -le 10 ]; then ok "$name ($((SECONDS - t0)) s)"; else bad "$name (exit $st after $((SECONDS - t0)) s)"; fi
else bad "$name (no retry logged)"; fi

# ---------------------------------------------------------------------------------------------
name="configuration errors exit 2 with the reason (unreadable key, min-idle not above the longest delivery)"
config "$out/cfg.json" cfg "$mock_port"
sed "s|AuthKey_TESTKEY001.p8|missing.p8|" "$out/cfg.json" > "$out/cfg-missing.json"
config "$out/cfg-idle.json" cfg "$mock_port" ', "deadline_ms": 10000, "min_idle_ms": 5000'
s1=0; "$cli" worker --config "$out/cfg-missing.json" > /dev/null 2> "$out/cfg1.txt" || s1=$?
s2=0; "$cli" worker --config "$out/cfg-idle.json" > /dev/null 2> "$out/cfg2.txt" || s2=$?
if [ "$s1" -eq 2 ] && grep -q 'app "demo": cannot read key_file' "$out/cfg1.txt" \
   && [ "$s2" -eq 2 ] && grep -q "min_idle_ms (5000) must exceed the longest delivery" "$out/cfg2.txt"
then ok "$name"; else bad "$name (exit $s1, $s2)"; cat "$out/cfg1.txt" "$out/cfg2.txt"; fi

name="outcomes prints text lines and --count stops; a format-2 entry it cannot read is an error, not an outcome; worker --help names the config"
rcli XADD "outcomes:{unreadable}" '*' v 2 worker w count 1 outcomes '[{"id":' > /dev/null
unreadable=0; "$cli" outcomes --redis "127.0.0.1:$redis_port" --shard unreadable > "$out/unreadable.out" 2> "$out/unreadable.err" || unreadable=$?
if "$cli" outcomes --redis "127.0.0.1:$redis_port" --shard bad --count 3 > "$out/text.out" \
   && [ "$(wc -l < "$out/text.out")" -eq 3 ] && grep -q " REJECTED 0 MissingId apns-id=- entry=" "$out/text.out" \
   && [ "$unreadable" -eq 1 ] && [ ! -s "$out/unreadable.out" ] && grep -q "not a JSON array of objects" "$out/unreadable.err" \
   && grep -q -- "--config <FILE>" <<< "$("$cli" worker --help)"
then ok "$name"; else bad "$name"; cat "$out/text.out" "$out/unreadable.out" "$out/unreadable.err"; fi

name="libswiftpush.so links neither hiredis nor anything of the worker's (only the CLI does)"
# Outputs are taken whole before grep reads them: with pipefail, `ldd ... | grep -q` fails
# whenever grep's early exit cuts ldd's write short (SIGPIPE), which made this test flaky.
if ! grep -q hiredis <<< "$(ldd "$build/libswiftpush.so")" && grep -q hiredis <<< "$(ldd "$cli")" \
   && ! grep -qi -e redis -e SwiftPushWorker <<< "$(nm -D "$build/libswiftpush.so")"
then ok "$name"; else bad "$name"; fi

# ArgumentParser, Hummingbird and SwiftNIO are linked statically, so ldd cannot see them: look
# for their symbols (the CLI's prove each pattern matches them; outputs taken whole, as above).
name="libswiftpush.so holds nothing of swift-argument-parser, Hummingbird or SwiftNIO (only the CLI does)"
lib_symbols=$(nm "$build/libswiftpush.so"); cli_symbols=$(nm "$cli"); linked=yes
for pattern in 14ArgumentParser 11Hummingbird 7NIOCore 8NIOPosix; do
  if grep -q "$pattern" <<< "$lib_symbols" || ! grep -q "$pattern" <<< "$cli_symbols"; then linked="no ($pattern)"; fi
done
if [ "$linked" = yes ]; then ok "$name"; else bad "$name: $linked"; fi

echo "worker: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
