#!/usr/bin/env bash
# `swiftpush status` and the worker's status page end to end (issue 26): a real redis-server, the
# mock, and a running worker (it counts its outcomes in stats:{w} and writes its heartbeat; two
# more shards are seeded as docs/worker.md's "Status" keys say a fleet leaves them: one paused
# with a dead consumer and no counters, as workers before issue 22 left it, one counted, with
# stats:{s} and heartbeats). Checks the HTTP server with 50 idle connections,
# `status` (JSON, plain lines, a terminal's redraw, the rate between two reads, empty views, a
# Redis Cluster of 3 masters and 3 replicas), and
# the page in headless Chromium against Redis, saving a screenshot.
# usage: Tests/status/run.sh BUILD_DIR [SCREENSHOT_DIR]   (default out/status)
# Prints one line per test and "status: N passed, N failed"; exits non-zero if any failed.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=$(cd "${1:?usage: run.sh BUILD_DIR [SCREENSHOT_DIR]}" && pwd)
shots=${2:-out/status}
cli=$build/swiftpush-cli
bash scripts/install-deps.sh chromium
source scripts/mock-ctl.sh
test_pki
mock_workspace

WORKER_PID=""; REDIS_PID=""; LOAD_PID=""
cleanup() {
  [ -n "$LOAD_PID" ] && kill "$LOAD_PID" 2>/dev/null || true
  [ -n "$WORKER_PID" ] && kill -9 "$WORKER_PID" 2>/dev/null || true
  [ -n "$REDIS_PID" ] && kill "$REDIS_PID" 2>/dev/null || true
  mock_stop_all
  rm -rf "${MOCK_CLEANUP_DIRS[@]}"
}
trap cleanup EXIT
wait_until() {
  local limit=$1; shift
  local end=$((SECONDS + limit))
  until "$@"; do [ "$SECONDS" -lt "$end" ] || return 1; sleep 0.1; done
}
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
rcli() { redis-cli -p "$redis_port" "$@"; }
pass=0; fail=0
ok() { echo "ok: $1"; pass=$((pass + 1)); }
bad() { echo "FAILED: $1"; fail=$((fail + 1)); }

redis_port=$(free_port)
mkdir -p "$out/redis"
redis-server --port "$redis_port" --bind 127.0.0.1 --dir "$out/redis" --save "" --appendonly no > "$out/redis.log" 2>&1 &
REDIS_PID=$!
wait_until 20 sh -c "redis-cli -p $redis_port ping 2>/dev/null | grep -q PONG" || { cat "$out/redis.log"; echo "redis did not start"; exit 1; }
gone1=00000000000000000000000000000000000000000000000000000000000000a1
gone2=00000000000000000000000000000000000000000000000000000000000000a2
printf '%s\n%s\n' "$gone1" "$gone2" > "$out/tokens.txt"
mock_start status "$cli" "$pki" --unregistered "$gone1" --unregistered "$gone2" --lenient-initial-limit

# Today's worker on shard "w" with its HTTP server, 300 notifications through it. Its status
# page's clock can be moved forward (SWIFTPUSH_STATUS_CLOCK_OFFSET_FILE, milliseconds added to
# Redis's time): the page's check of a pause in the reads moves it instead of waiting.
echo 0 > "$out/clock-offset"
cat > "$out/w.json" <<JSON
{"redis": {"host": "127.0.0.1", "port": $redis_port}, "shard": "w", "metrics_port": 0,
 "apps": {"demo": {"key_file": "$pki/AuthKey_TESTKEY001.p8", "key_id": "TESTKEY001", "team_id": "TEAM123456",
                   "host": "localhost", "port": $MOCK_PORT, "ca_file": "$pki/ca.pem", "topics": ["com.example.app"]}}}
JSON
SWIFTPUSH_STATUS_CLOCK_OFFSET_FILE="$out/clock-offset" "$cli" worker --config "$out/w.json" --consumer status-w1 > "$out/w.out" 2> "$out/w.err" &
WORKER_PID=$!
python3 - "$gone1" "$gone2" > "$out/w.jsonl" <<'PY'
import json, sys
for i in range(300):
    token = sys.argv[1] if i % 50 == 7 else sys.argv[2] if i % 75 == 11 else "ff%062x" % (i + 1)
    print(json.dumps({"id": f"w-{i}", "app": "demo", "token": token, "payload": {"aps": {"alert": f"n {i}"}}}))
PY
"$cli" enqueue --batch 1 --redis "127.0.0.1:$redis_port" --shard w --file "$out/w.jsonl" > /dev/null
wait_until 60 grep -q " metrics=http://" "$out/w.err" || { cat "$out/w.err"; echo "the worker did not start"; exit 1; }
base=$(sed -n 's|.* metrics=\(http://[0-9.:]*\)/metrics.*|\1|p' "$out/w.err")
http_port=${base##*:}
wait_until 120 sh -c "[ \"\$(redis-cli -p $redis_port XLEN 'outcomes:{w}')\" -eq 300 ] && [ \"\$(redis-cli -p $redis_port XPENDING 'push:{w}' senders | head -1)\" -eq 0 ]" \
  || { tail -5 "$out/w.err"; echo "the worker did not settle 300 notifications"; exit 1; }

# The other shards, as the fleet leaves them (docs/worker.md, "Status").
for i in $(seq 1 40); do rcli XADD 'push:{paused}' '*' id "p-$i" app demo token "ff$i" payload '{}' > /dev/null; done
rcli XGROUP CREATE 'push:{paused}' senders 0 > /dev/null
rcli XREADGROUP GROUP senders dead-worker COUNT 15 STREAMS 'push:{paused}' '>' > /dev/null
rcli ZADD 'delayed:{paused}' 1 a 2 b 3 c > /dev/null
for t in 1111111111111111111111111111111111111111111111111111111111111111 2222222222222222222222222222222222222222222222222222222222222222; do
  rcli XADD 'unregistered:{paused}' '*' token "$t" app demo id "p-$t" reason Unregistered timestamp_ms 0 > /dev/null
  echo "$t" >> "$out/tokens.txt"
done
for i in $(seq 1 10); do rcli XADD 'push:{counted}' '*' v 2 app demo > /dev/null; done
rcli XGROUP CREATE 'push:{counted}' senders 0 > /dev/null
rcli XREADGROUP GROUP senders hb-fresh COUNT 4 STREAMS 'push:{counted}' '>' > /dev/null
rcli HSET 'stats:{counted}' enqueued 5000 accepted 3000 rejected 120 failed 30 reason:Unregistered 80 reason:BadDeviceToken 40 \
  reason:Timeout 30 app:demo:accepted 3000 app:demo:rejected 120 app:demo:failed 30 campaign:spring:enqueued 2000 \
  campaign:spring:accepted 1500 campaign:spring:rejected 50 campaign:spring:reason:Unregistered 50 \
  campaign:autumn:enqueued 1000 campaign:autumn:accepted 100 > /dev/null
heartbeat() {  # heartbeat NAME AGE_MS
  local now; now=$(($(date +%s%N) / 1000000))
  rcli HSET 'workers:{counted}' "$1" "{\"consumer\":\"$1\",\"host\":\"host-$1\",\"pid\":$((1000 + ${#1})),\"version\":\"test\",\"started_ms\":$((now - 600000)),\"heartbeat_ms\":$((now - $2)),\"shards\":[\"counted\"],\"in_flight\":4,\"held_entries\":4,\"counters\":{\"sent\":3150}}" > /dev/null
}
heartbeat hb-fresh 500
heartbeat hb-stale 60000

# ---------------------------------------------------------------------------------------------
if python3 Tests/status/http_checks.py "$http_port" > "$out/http.txt"; then
  while read -r line; do ok "${line#ok: }"; done < "$out/http.txt"
else
  while read -r line; do case "$line" in ok:*) ok "${line#ok: }";; *) bad "${line#FAILED: }";; esac; done < "$out/http.txt"
fi

name="status --json: every shard's queue as Redis holds it (in entries), the counted shard's progress and campaigns (in notifications), the fleet in mixed units, every number named with its unit"
"$cli" status --redis "127.0.0.1:$redis_port" --interval 0 --json > "$out/status.json"
if python3 - "$out/status.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
shards = {x["shard"]: x for x in s["shards"]}
assert list(shards) == ["counted", "paused", "w"], list(shards)
p, c, w = shards["paused"], shards["counted"], shards["w"]
assert (p["waiting_entries"], p["pending_entries"], p["delayed_entries"], p["unregistered_notifications"], p["counted"]) == (25, 15, 3, 2, False), p
assert p["progress"]["unit"] == "entries" and p["progress"]["done_entries"] == 0 and p["progress"]["remaining_entries"] == 43, p["progress"]
assert p["progress"]["done_notifications"] is None and p["in_flight_notifications"] is None and p["state"] == "working", p
assert (w["waiting_entries"], w["pending_entries"], w["outcome_records"], w["progress"]["done_notifications"], w["counted"]) == (0, 0, 300, 300, True), w
assert w["state"] == "done" and w["waiting_notifications"] == 0 and w["in_flight_notifications"] == 0, w
assert c["counted"] and c["progress"]["done_notifications"] == 3150 and c["progress"]["remaining_notifications"] == 1850, c
# hb-fresh holds 4 in flight; hb-stale's figure is not current.
assert c["outcomes"]["gone_notifications"] == 80 and c["in_flight_notifications"] == 4 and c["waiting_notifications"] == 1846, c
f = s["fleet"]
assert f["progress"]["unit"] == "mixed" and f["pending_entries"] == 19 and f["waiting_entries"] == 31 and f["state"] == "working", f
assert f["waiting_notifications"] == 1846 and f["in_flight_notifications"] is None, f  # paused: a dead consumer holds 15 entries
camps = {x["name"]: x for x in s["campaigns"]}
assert camps["spring"]["progress"]["done_notifications"] == 1550 and camps["spring"]["progress"]["remaining_notifications"] == 450, camps
workers = {x["consumer"]: x for x in s["workers"]}
assert workers["hb-stale"]["stale"] and not workers["hb-fresh"]["stale"] and workers["dead-worker"]["redis_pending_entries"] == 15, workers
assert workers["hb-fresh"]["in_flight_notifications"] == 4, workers["hb-fresh"]
# Every number says its unit in its name (the workers' counters keep /metrics' names).
def numbers(v, path=""):
    if isinstance(v, dict):
        for k, x in v.items():
            if k in ("counters", "gauges"):
                continue
            if isinstance(x, (int, float)) and not isinstance(x, bool):
                yield path + "." + k
            else:
                yield from numbers(x, path + "." + k)
    elif isinstance(v, list):
        for x in v:
            yield from numbers(x, path + "[]")
units = ("_notifications", "_entries", "_records", "_per_s", "_ms", "_s")
unnamed = sorted({n for n in numbers(s) if not n.endswith(units)
                  and n.rsplit(".", 1)[1] not in ("notifications", "entries", "pid", "fraction", "shards", "consumers")})
assert not unnamed, unnamed
assert ".fleet.pending_entries" in set(numbers(s)) and ".shards[].waiting_notifications" in set(numbers(s))
assert workers["status-w1"]["heartbeat_ms"] is not None and not workers["status-w1"]["stale"], workers["status-w1"]
assert any("shard paused: no stats:{s}" in n for n in s["notes"]), s["notes"]
assert all("…" in g["token"] for g in s["recent_unregistered"]) and s["error"] is None
PY
then ok "$name"; else bad "$name"; fi

name="status --campaign: the campaign's figures; an unknown campaign or shard says it is unknown and names the known ones (exit 0)"
c1=0; "$cli" status --redis "127.0.0.1:$redis_port" --interval 0 --json --campaign spring --shards counted > "$out/spring.json" || c1=$?
c2=0; "$cli" status --redis "127.0.0.1:$redis_port" --interval 0 --json --campaign nope > "$out/nope.json" || c2=$?
c3=0; "$cli" status --redis "127.0.0.1:$redis_port" --interval 0 --json --shards zz > "$out/zz.json" || c3=$?
if [ "$c1$c2$c3" = 000 ] && python3 - "$out/spring.json" "$out/nope.json" "$out/zz.json" <<'PY'
import json, sys
spring, nope, zz = (json.load(open(f)) for f in sys.argv[1:4])
assert spring["campaign"] == "spring" and spring["fleet"]["progress"]["done_notifications"] == 1550, spring["fleet"]
assert spring["fleet"]["unregistered_notifications"] == 50 and spring["fleet"]["state"] == "working", spring["fleet"]
assert [x["name"] for x in spring["campaigns"]] == ["spring"] and spring["apps"] == []
assert nope["fleet"]["state"] == "unknown" and nope["fleet"]["progress"]["done_notifications"] is None and nope["fleet"]["progress"]["eta_s"] is None, nope["fleet"]
assert "campaign nope unknown: no shard shown counts it; known campaigns: autumn, spring" in nope["notes"] and nope["error"] is None, nope["notes"]
assert [(x["shard"], x["known"], x["state"]) for x in zz["shards"]] == [("zz", False, "unknown")] and zz["error"] is None, zz["shards"]
assert zz["fleet"]["state"] == "unknown" and "shard zz unknown: no key of it in Redis; known shards: counted, paused, w" in zz["notes"], zz["notes"]
PY
then ok "$name"; else bad "$name (exits $c1 $c2 $c3)"; fi

name="status --campaign nope in a terminal's words: unknown, no figures, the known campaigns named"
"$cli" status --redis "127.0.0.1:$redis_port" --interval 0 --campaign nope > "$out/nope.txt" || true
if grep -q "^campaign .* - of - notifications .* unknown$" "$out/nope.txt" \
   && grep -qx "note: campaign nope unknown: no shard shown counts it; known campaigns: autumn, spring" "$out/nope.txt" \
   && ! grep -q "time left done" "$out/nope.txt"
then ok "$name"; else bad "$name"; cat "$out/nope.txt"; fi

name="status in a pipe prints plain lines (no bar, no escape), notifications and entries on lines of their own; on a terminal --watch redraws in place with a bar"
"$cli" status --redis "127.0.0.1:$redis_port" --interval 0 > "$out/plain.txt"
script -qec "$cli status --redis 127.0.0.1:$redis_port --watch --count 2 --interval 0.2 --shards counted" /dev/null > "$out/tty.txt" 2>&1 || true
if grep -q "^shard  *state" "$out/plain.txt" && grep -q "^note: shard paused: no stats" "$out/plain.txt" \
   && grep -q "^  notifications: waiting 1,846 · in flight - · 410s [0-9,]*$" "$out/plain.txt" \
   && grep -q "^  entries in Redis: waiting 31 · pending 19 · delayed 3$" "$out/plain.txt" \
   && ! grep -q $'\e' "$out/plain.txt" && ! grep -q "█" "$out/plain.txt" \
   && grep -q $'\e\[[0-9]*A' "$out/tty.txt" && grep -q "█" "$out/tty.txt" && [ "$(grep -c "^shard  *state" "$out/tty.txt")" -eq 2 ]
then ok "$name"; else bad "$name"; cat "$out/plain.txt"; cat -v "$out/tty.txt" | head -20; fi

name="status --watch --json: the rate is what was counted between two reads over Redis's time between them"
"$cli" status --redis "127.0.0.1:$redis_port" --watch --count 2 --interval 1 --json --shards counted > "$out/watch.jsonl" &
watch_pid=$!
wait_until 20 test -s "$out/watch.jsonl" && rcli HINCRBY 'stats:{counted}' accepted 500 > /dev/null
wait "$watch_pid" || true
if python3 - "$out/watch.jsonl" <<'PY'
import json, sys
a, b = (json.loads(l) for l in open(sys.argv[1]))
rate = b["fleet"]["progress"]["notifications_per_s"]
expected = 500 * 1000 / (b["time_ms"] - a["time_ms"])
assert a["fleet"]["progress"]["notifications_per_s"] is None and abs(rate - expected) <= 0.1, (rate, expected)
assert b["fleet"]["progress"]["done_notifications"] - a["fleet"]["progress"]["done_notifications"] == 500
assert b["fleet"]["progress"]["eta_s"] is not None
PY
then ok "$name"; else bad "$name"; cat "$out/watch.jsonl"; fi

name="status against a Redis that is not there: one line, exit 2"
code=0; "$cli" status --redis "127.0.0.1:$(free_port)" --interval 0 > /dev/null 2> "$out/noredis.err" || code=$?
if [ "$code" -eq 2 ] && grep -q "cannot connect to Redis" "$out/noredis.err"; then ok "$name"; else bad "$name (exit $code)"; cat "$out/noredis.err"; fi

name="status --cluster: shards on every master are found and each is read on its slot's master"
cluster=$out/cluster
if bash Tests/support/redis-cluster.sh start "$cluster" --owner $$ > "$out/cluster.log" 2>&1; then
  ccli() { $(cat "$cluster/cli") -c -h 127.0.0.1 -p "$(head -1 "$cluster/ports")" "$@"; }
  for s in a b c d e; do ccli XADD "push:{$s}" '*' id x > /dev/null; done
  ccli HSET 'stats:{b}' enqueued 10 accepted 4 > /dev/null
  slots=$(for s in a b c d e; do ccli CLUSTER KEYSLOT "push:{$s}"; done | tr '\n' ' ')
  "$cli" status --cluster "$(cat "$cluster/nodes")" --interval 0 --json > "$out/cluster.json" || true
  if python3 - "$out/cluster.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
got = [(x["shard"], x["stream_entries"], x["counted"], x["progress"]["done_notifications" if x["counted"] else "done_entries"]) for x in s["shards"]]
assert got == [("a", 1, False, 0), ("b", 1, True, 4), ("c", 1, False, 0), ("d", 1, False, 0), ("e", 1, False, 0)], got
assert s["error"] is None
PY
  then ok "$name (slots $slots)"; else bad "$name"; cat "$out/cluster.json"; fi
  bash Tests/support/redis-cluster.sh stop "$cluster" 2>/dev/null || true
else bad "$name (the cluster did not start)"; tail -5 "$out/cluster.log"; fi

# The page in Chromium while the counted shard moves (its counters and its fresh heartbeat
# rewritten every 0.5 s, as working workers would), then compared with Redis once it stops.
touch "$out/live"
( while [ -f "$out/live" ]; do
    rcli HINCRBY 'stats:{counted}' accepted 40 > /dev/null
    rcli HINCRBY 'stats:{counted}' campaign:spring:accepted 20 > /dev/null
    heartbeat hb-fresh 200
    sleep 0.5
  done ) &
LOAD_PID=$!
if python3 Tests/status/browser_check.py "$(command -v chromium)" "$base/" "$redis_port" "$shots" "$out/tokens.txt" "$out/live" "$out/clock-offset" > "$out/browser.txt" 2>&1; then :; fi
while read -r line; do case "$line" in ok:*) ok "page: ${line#ok: }";; FAILED:*) bad "page: ${line#FAILED: }";; *) echo "  $line";; esac; done < "$out/browser.txt"
grep -q "screenshot saved" "$out/browser.txt" || bad "page: no screenshot"
rm -f "$out/live"   # the check removes it once the page moved; if it failed before, here
wait "$LOAD_PID" 2>/dev/null || true
LOAD_PID=""

kill -TERM "$WORKER_PID"
wait "$WORKER_PID" || true
WORKER_PID=""
# Every line the worker wrote, its HTTP server's included, in one format: logfmt, the time first
# (RFC 3339, UTC, milliseconds).
name="the worker's log, HTTP server included, is logfmt with RFC 3339 UTC times, every line"
others=$(grep -cvE '^ts=[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z level=(info|warning|error) msg=' "$out/w.err" || true)
if [ "$others" -eq 0 ] && grep -q 'msg="serving HTTP"' "$out/w.err"; then ok "$name ($(wc -l < "$out/w.err") lines)"
else bad "$name ($others other lines)"; grep -vE '^ts=' "$out/w.err" | head -3; fi
echo "status: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
