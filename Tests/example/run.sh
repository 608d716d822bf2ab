#!/usr/bin/env bash
# The Swift examples (Examples/NotifyService/Sources: executable targets of this package, built
# with it) against the mock:
#   - the README's Swift blocks are the example files, byte for byte, and run: ACCEPTED;
#   - NotifyService (Hummingbird 2): POST /notify is ACCEPTED (JSON out), a bad token is a 400
#     naming the rule, and SIGTERM with a notification in flight lets it finish, then exit 0.
# usage: Tests/example/run.sh BUILD_DIR   (the debug build: swiftpush-cli for the mock, and the
#        examples: make test-example builds them first, make test's build has)
# Prints one line per test and "example: N passed, N failed"; exits non-zero if any failed.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=$(cd "${1:?usage: run.sh BUILD_DIR}" && pwd)
cli=$build/swiftpush-cli
source scripts/mock-ctl.sh
test_pki
mock_workspace
# Each directory of Examples/NotifyService/Sources is an executable target (as make's EXAMPLES).
for product in $(ls Examples/NotifyService/Sources); do
  [ -x "$build/$product" ] || { echo "example: 0 passed, 1 failed ($build/$product is missing: make build-examples)"; exit 1; }
done
bin=$build

mock_start example "$cli" "$pki"
port=$MOCK_PORT
# Answers 3 s late, and a control port to see a request arrive: for the drain on SIGTERM.
mock_start example-slow "$cli" "$pki" --delay-ms 3000 --control-port-file "$out/slow-control"
slow_port=$MOCK_PORT

pass=0; fail=0
ok() { echo "ok: $1"; pass=$((pass + 1)); }
bad() { echo "FAILED: $1"; [ -f "$out/detail" ] && sed 's/^/    /' "$out/detail"; fail=$((fail + 1)); }
t1=00fc13adff785122b4ad28809a3420982341241421348097878e577c991de8f0
mkdir -p "$out/readme" && cp "$pki/AuthKey_TESTKEY001.p8" "$out/readme/"
readme_env=(APNS_HOST=localhost APNS_PORT=$port APNS_CA_FILE=$pki/ca.pem)

name="the README's Swift block is Examples/NotifyService/Sources/SendOne/main.swift and sends one: accepted"
python3 scripts/readme-block.py README.md "Swift" swift 1 > "$out/readme-one.swift"
if cmp -s "$out/readme-one.swift" Examples/NotifyService/Sources/SendOne/main.swift \
   && (cd "$out/readme" && env "${readme_env[@]}" "$bin/SendOne") > "$out/detail" 2>&1 \
   && grep -qE '^accepted 200 - [0-9a-f-]{36}$' "$out/detail"
then ok "$name"; else diff "$out/readme-one.swift" Examples/NotifyService/Sources/SendOne/main.swift >> "$out/detail" || true; bad "$name"; fi

name="the README's engine block is Examples/NotifyService/Sources/SendMany/main.swift and sends 10,000: all accepted"
python3 scripts/readme-block.py README.md "Swift" swift 2 > "$out/readme-many.swift"
if cmp -s "$out/readme-many.swift" Examples/NotifyService/Sources/SendMany/main.swift \
   && (cd "$out/readme" && env "${readme_env[@]}" "$bin/SendMany") > "$out/detail" 2>&1 \
   && grep -qx '10000 of 10000 accepted' "$out/detail"
then ok "$name"; else diff "$out/readme-many.swift" Examples/NotifyService/Sources/SendMany/main.swift >> "$out/detail" || true; bad "$name"; fi

name="the README's task executor block is Examples/NotifyService/Sources/SendTasks/main.swift and sends 10,000 from 1,000 tasks: all accepted"
python3 scripts/readme-block.py README.md "Swift" swift 3 > "$out/readme-tasks.swift"
if cmp -s "$out/readme-tasks.swift" Examples/NotifyService/Sources/SendTasks/main.swift \
   && (cd "$out/readme" && env "${readme_env[@]}" "$bin/SendTasks") > "$out/detail" 2>&1 \
   && grep -qx '10000 of 10000 accepted' "$out/detail"
then ok "$name"; else diff "$out/readme-tasks.swift" Examples/NotifyService/Sources/SendTasks/main.swift >> "$out/detail" || true; bad "$name"; fi

# start_service NAME APNS_PORT: runs notify-service on a free HTTP port; sets SERVICE_PID and HTTP_PORT.
start_service() {
  APNS_HOST=localhost APNS_PORT=$2 APNS_CA_FILE=$pki/ca.pem APNS_KEY_FILE=$pki/AuthKey_TESTKEY001.p8 \
    APNS_KEY_ID=TESTKEY001 APNS_TEAM_ID=TEAM123456 APNS_TOPIC=com.example.app HTTP_PORT=0 \
    "$bin/NotifyService" > "$out/$1.log" 2>&1 &
  SERVICE_PID=$!
  MOCK_PIDS+=("$SERVICE_PID") # stopped at exit with the mocks, if a test failed early
  for _ in $(seq 1 300); do # up to 30 s: a condition, polled
    HTTP_PORT=$(sed -n 's/^notify-service: listening on 127.0.0.1:\([0-9]*\)$/\1/p' "$out/$1.log")
    [ -n "$HTTP_PORT" ] && return 0
    kill -0 "$SERVICE_PID" 2>/dev/null || break
    sleep 0.1
  done
  cat "$out/$1.log"; echo "notify-service did not start"; return 1
}
# post PORT JSON: POST /notify; prints "STATUS BODY".
post() {
  python3 - "$1" "$2" <<'PY'
import sys, urllib.request, urllib.error
req = urllib.request.Request(f"http://127.0.0.1:{sys.argv[1]}/notify", data=sys.argv[2].encode(),
                             headers={"content-type": "application/json"})
try:
    with urllib.request.urlopen(req, timeout=60) as r:
        print(r.status, r.read().decode())
except urllib.error.HTTPError as e:
    print(e.code, e.read().decode())
PY
}

start_service service "$port"
name="POST /notify with an alert: 200, the result as JSON (accepted, status 200, an apns-id)"
post "$HTTP_PORT" "{\"token\":\"$t1\",\"alert\":\"Hello\"}" > "$out/detail"
if python3 - "$out/detail" <<'PY'
import json, sys
status, body = open(sys.argv[1]).read().split(" ", 1)
r = json.loads(body)
assert status == "200" and r["outcome"] == "accepted" and r["status"] == 200 and len(r["apns_id"]) == 36, r
assert r["attempts"] == 1 and "reason" not in r or r.get("reason") is None, r
PY
then ok "$name"; else bad "$name"; fi

name="POST /notify with a whole payload: accepted"
post "$HTTP_PORT" "{\"token\":\"$t1\",\"payload\":{\"aps\":{\"alert\":{\"title\":\"T\"},\"badge\":2},\"k\":[1,2.5,null]}}" > "$out/detail"
if grep -q '^200 .*"outcome":"accepted"' "$out/detail"; then ok "$name"; else bad "$name"; fi

name="a bad token is a 400 saying why; no alert or payload is a 400 too; not JSON is a 400"
if post "$HTTP_PORT" '{"token":"12345","alert":"x"}' > "$out/detail" && grep -q '^400 .*odd number of hex digits' "$out/detail" \
   && post "$HTTP_PORT" "{\"token\":\"$t1\"}" >> "$out/detail" && grep -q '^400 .*give either' "$out/detail" \
   && post "$HTTP_PORT" 'not json' >> "$out/detail" && grep -q '^400 ' <(tail -1 "$out/detail")
then ok "$name"; else bad "$name"; fi
kill -TERM "$SERVICE_PID"; status=0; wait "$SERVICE_PID" || status=$?
name="SIGTERM when idle: exit 0"
if [ "$status" -eq 0 ]; then ok "$name"; else echo "exit status $status" > "$out/detail"; bad "$name"; fi

start_service service-slow "$slow_port"
name="SIGTERM with a notification in flight: its POST gets the result (accepted), then exit 0"
post "$HTTP_PORT" "{\"token\":\"$t1\",\"alert\":\"late\"}" > "$out/slow-post" &
poster=$!
control=$(cat "$out/slow-control")
for _ in $(seq 1 300); do # until the mock has the request (up to 30 s)
  python3 -c "import json,sys,urllib.request; sys.exit(0 if json.load(urllib.request.urlopen('http://127.0.0.1:$control/stats'))['requests'] >= 1 else 1)" && break
  sleep 0.1
done
kill -TERM "$SERVICE_PID"; status=0; wait "$SERVICE_PID" || status=$?
wait "$poster" || true
{ echo "exit status $status"; cat "$out/slow-post" "$out/service-slow.log"; } > "$out/detail"
if [ "$status" -eq 0 ] && grep -q '^200 .*"outcome":"accepted"' "$out/slow-post"
then ok "$name"; else bad "$name"; fi

echo "example: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
