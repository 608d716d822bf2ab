#!/usr/bin/env bash
# make demo-worker: the whole scale-out path on this machine. Starts a Redis (loopback, AOF) and
# the mock APNs server, enqueues 100,000 notifications with `swiftpush enqueue` (three tokens
# are unregistered at the mock), runs two `swiftpush worker`s until every notification has its
# outcome, stops them with SIGTERM, and prints the outcomes by kind and the 410 stream's size.
#   scripts/demo-worker.sh RELEASE_DIR PKI_DIR [COUNT]
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(cd "${1:?usage: demo-worker.sh RELEASE_DIR PKI_DIR [COUNT]}" && pwd)
pki=$(cd "${2:?}" && pwd)
count=${3:-100000}
cli=$build/swiftpush-cli
source scripts/mock-ctl.sh
mock_workspace
REDIS_PID=""; WORKERS=""
trap 'for p in $WORKERS; do kill -9 "$p" 2>/dev/null || true; done; [ -n "$REDIS_PID" ] && kill "$REDIS_PID" 2>/dev/null; mock_stop_all; rm -rf "$out"' EXIT

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
redis-server --port "$port" --bind 127.0.0.1 --dir "$out" --appendonly yes --save "" > "$out/redis.log" 2>&1 &
REDIS_PID=$!
until redis-cli -p "$port" ping 2>/dev/null | grep -q PONG; do kill -0 "$REDIS_PID" || exit 1; sleep 0.05; done
gone=(00000000000000000000000000000000000000000000000000000000000000a1 00000000000000000000000000000000000000000000000000000000000000a2 00000000000000000000000000000000000000000000000000000000000000a3)
mock_start demo "$cli" "$pki" --lenient-initial-limit --unregistered "${gone[0]}" --unregistered "${gone[1]}" --unregistered "${gone[2]}"
cat > "$out/worker.json" <<JSON
{"redis": {"host": "127.0.0.1", "port": $port},
 "apps": {"demo": {"key_file": "$pki/AuthKey_TESTKEY001.p8", "key_id": "TESTKEY001", "team_id": "TEAM123456",
                   "host": "localhost", "port": $MOCK_PORT, "ca_file": "$pki/ca.pem", "topics": ["com.example.app"]}}}
JSON
echo "Redis on 127.0.0.1:$port, mock APNs on localhost:$MOCK_PORT; worker configuration:"
sed 's/^/  /' "$out/worker.json"
python3 - "$count" "${gone[@]}" > "$out/in.jsonl" <<'PY'
import json, sys
n, gone = int(sys.argv[1]), sys.argv[2:]
for i in range(n):
    token = gone[i % 3] if i % 10000 == 9999 else "ff%062x" % (i % 5000 + 1)
    print(json.dumps({"id": f"demo-{i}", "app": "demo", "token": token, "payload": {"aps": {"alert": f"Hello {i}"}}}))
PY
echo "\$ swiftpush enqueue --redis 127.0.0.1:$port < in.jsonl"
"$cli" enqueue --redis "127.0.0.1:$port" < "$out/in.jsonl"
t0=$(date +%s.%N)
for w in 1 2; do
  "$cli" worker --config "$out/worker.json" --consumer "demo-$w" 2> "$out/w$w.log" &
  WORKERS="$WORKERS $!"
done
echo "\$ swiftpush worker --config worker.json   (two of them)"
# Done when every entry is read and settled (docs/worker.md, "Completion"): the lines went in
# batch entries of 500, recorded one outcome record per settle, so XLEN of the outcomes says
# nothing.
until stream_drained "$port" 0; do sleep 0.1; done
t1=$(date +%s.%N)
for p in $WORKERS; do kill -TERM "$p"; done
for p in $WORKERS; do wait "$p"; done
WORKERS=""
echo "$count notifications sent in $(python3 -c "print(f'{$t1 - $t0:.2f}')") s by two workers; each stopped on SIGTERM:"
for w in 1 2; do tail -n 1 "$out/w$w.log" | sed 's/^/  /'; done
echo "\$ swiftpush outcomes | tail -n 2"
"$cli" outcomes --redis "127.0.0.1:$port" | tail -n 2 | sed 's/^/  /'
echo "outcomes by kind and reason:"
"$cli" outcomes --redis "127.0.0.1:$port" | awk '{print $2, $4}' | sort | uniq -c | sed 's/^/  /'
echo "pending entries: $(redis-cli -p "$port" XPENDING 'push:{0}' senders | head -1); unregistered tokens reported: $(redis-cli -p "$port" XLEN 'unregistered:{0}')"
