#!/usr/bin/env bash
# `swiftpush enqueue` and `swiftpush outcomes` on the Redis layer (SwiftPushRedis) against real
# servers: a TLS-only redis-server with an ACL user (right credentials work; a wrong password,
# an unknown CA and a wrong host name each end the command at once, exit 2, after one
# connection the server accepted), then a 3-master + 3-replica cluster (Tests/support/redis-cluster.sh):
# entries spread over 6 shards by id (the same rule as the Python producer), WAIT 1 on every
# pipeline, outcomes read from the cluster. (WAIT's cost per pipeline: the figures printed by
# Tests/SwiftPushRedisTests/ClusterRoutingTests.swift.)
# usage: Tests/redis/run.sh BUILD_DIR
# Prints one line per test and "redis: N passed, N failed"; exits non-zero if any failed.
# Every wait is on a condition (with a time limit), never a bare sleep.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
build=$(cd "${1:?usage: run.sh BUILD_DIR}" && pwd)
cli=$build/swiftpush-cli
pki=$root/.build-pki
bash scripts/make-test-pki.sh "$pki" > /dev/null
out=$(mktemp -d "${TMPDIR:-/tmp}/swiftpush-redis-tests.XXXXXX")
REDIS_PID=""
cleanup() {
  [ -n "$REDIS_PID" ] && { kill -9 "$REDIS_PID" 2>/dev/null; wait "$REDIS_PID" 2>/dev/null; } || true
  bash Tests/support/redis-cluster.sh stop "$out/cluster" 2>/dev/null || true
  rm -rf "$out"
}
trap cleanup EXIT

pass=0; fail=0
ok() { echo "ok: $1"; pass=$((pass + 1)); }
bad() { echo "FAILED: $1"; [ -s "$out/err" ] && sed 's/^/    /' "$out/err" | tail -n 5; fail=$((fail + 1)); }

wait_until() {
  local limit=$1; shift
  local end=$((SECONDS + limit))
  until "$@"; do
    [ "$SECONDS" -lt "$end" ] || return 1
    sleep 0.1 # polling: redis-server announces readiness to nobody
  done
}
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# A TLS-only Redis whose only user is "enqueuer" (the default user is off); verbose, so that its
# log has one "Accepted" line per TCP connection, whether its TLS handshake succeeds or not.
port=$(free_port)
password="correct-horse-$$"
printf '%s\n' "$password" > "$out/password"
mkdir -p "$out/redis"
redis-server --port 0 --tls-port "$port" --bind 127.0.0.1 --dir "$out/redis" --save "" \
  --tls-cert-file "$pki/server.pem" --tls-key-file "$pki/server.key" --tls-ca-cert-file "$pki/ca.pem" \
  --tls-auth-clients no --user default off --user enqueuer on ">$password" "~*" "&*" "+@all" \
  --loglevel verbose --logfile "$out/redis.log" > /dev/null 2>&1 &
REDIS_PID=$!
rcli() { redis-cli -p "$port" --tls --cacert "$pki/ca.pem" --user enqueuer --pass "$password" --no-auth-warning "$@"; }
up() { rcli PING 2>/dev/null | grep -q PONG; }
wait_until 20 up \
  || { tail "$out/redis.log"; echo "redis did not start"; exit 1; }
accepted() { grep -c ' Accepted ' "$out/redis.log" || true; }

tls_opts=(--redis "localhost:$port" --redis-ca-file "$pki/ca.pem" --redis-user enqueuer --redis-password-file "$out/password")
lines() { # COUNT PREFIX: JSON lines for enqueue
  python3 -c 'import json, sys
for i in range(int(sys.argv[1])):
    print(json.dumps({"id": f"{sys.argv[2]}-{i}", "app": "demo", "token": "00" * 32, "payload": {"aps": {"alert": str(i)}}}))' "$1" "$2"
}
lines 1000 tls > "$out/1000.jsonl"

name="enqueue over TLS as an ACL user, the password from a file: 1000 entries"
if "$cli" enqueue "${tls_opts[@]}" --batch 1 --shard t1 --file "$out/1000.jsonl" > "$out/stdout" 2> "$out/err" \
   && grep -qx "enqueued 1000 notifications in 1000 entries" "$out/stdout" && [ "$(rcli XLEN 'push:{t1}')" = 1000 ]
then ok "$name"; else bad "$name"; fi

# The progress line on a terminal, --quiet, and --campaign (Tests/redis/enqueue_progress.py).
if python3 Tests/redis/enqueue_progress.py "$cli" "$out" -- "${tls_opts[@]}" > "$out/progress.out" 2> "$out/err"
then ok "enqueue: a progress line on a terminal for 6000 lines, none with --quiet or into a file"; else bad "enqueue progress: $(grep FAILED "$out/progress.out" | head -3)"; fi
name="enqueue --campaign: set on the lines that name none, a line's own campaign kept"
if [ "$(rcli XLEN 'push:{prog}')" = 6000 ] \
   && [ "$(rcli XRANGE 'push:{prog}' - + COUNT 1 | grep -A1 -x campaign | tail -1)" = own ] \
   && [ "$(rcli XREVRANGE 'push:{prog}' + - COUNT 1 | grep -A1 -x campaign | tail -1)" = spring ] \
   && [ -z "$(rcli XREVRANGE 'push:{quiet}' + - COUNT 1 | grep -x campaign)" ]
then ok "$name"; else bad "$name"; fi

name="outcomes over TLS as an ACL user, the password from an environment variable, settings from a worker.json"
rcli XADD 'outcomes:{t1}' '*' id tls-7 outcome ACCEPTED status 200 reason "" apns_id x entry 1-1 > /dev/null
cat > "$out/worker.json" <<JSON
{"redis": {"host": "127.0.0.1", "port": $port, "username": "enqueuer", "password_env": "SWIFTPUSH_TEST_REDIS_PASSWORD",
           "tls": {"ca_file": "$pki/ca.pem"}}, "apps": {}}
JSON
if SWIFTPUSH_TEST_REDIS_PASSWORD=$password "$cli" outcomes --redis-config "$out/worker.json" --shard t1 > "$out/stdout" 2> "$out/err" \
   && grep -q "^tls-7 ACCEPTED 200 - " "$out/stdout"
then ok "$name"; else bad "$name"; fi

# refused LABEL EXPECTED-TEXT OPTIONS...: enqueue must exit 2 within 5 s, naming the cause, never
# printing the password, after exactly one connection.
refused() {
  local label=$1 text=$2; shift 2
  local before start status=0
  before=$(accepted); start=$SECONDS
  "$cli" enqueue "$@" --file "$out/1000.jsonl" > "$out/stdout" 2> "$out/err" || status=$?
  local elapsed=$((SECONDS - start)) seen=$(( $(accepted) - before ))
  if [ "$status" = 2 ] && [ "$elapsed" -le 5 ] && grep -q -- "$text" "$out/err" && ! grep -q -- "$password" "$out/err" && [ "$seen" = 1 ]
  then ok "$label"
  else bad "$label (exit $status after ${elapsed} s, $seen connections: $(head -c 300 "$out/err"))"; fi
}
printf 'wrong-horse\n' > "$out/wrong"
refused "a wrong password: exit 2 at once, WRONGPASS named, one connection" WRONGPASS \
  --redis "localhost:$port" --redis-ca-file "$pki/ca.pem" --redis-user enqueuer --redis-password-file "$out/wrong"
refused "an unknown CA: exit 2 at once, 'not trusted', one connection" "not trusted" \
  --redis "localhost:$port" --redis-ca-file "$pki/untrusted-ca.pem" --redis-user enqueuer --redis-password-file "$out/password"
refused "a wrong host name: exit 2 at once, the name named, one connection" "not valid for \"redis.example.com\"" \
  --redis "localhost:$port" --redis-ca-file "$pki/ca.pem" --redis-server-name redis.example.com --redis-user enqueuer --redis-password-file "$out/password"
refused "no credentials for a server that wants them: exit 2 at once, NOAUTH named, one connection" NOAUTH \
  --redis "localhost:$port" --redis-ca-file "$pki/ca.pem"

name="bad Redis options are usage errors (exit 2) naming the option"
status=0; "$cli" enqueue --redis "localhost:$port" --cluster "a:1" < /dev/null > /dev/null 2> "$out/err" || status=$?
status2=0; "$cli" outcomes --redis-user someone < /dev/null > /dev/null 2> "$out/err2" || status2=$?
if [ "$status" = 2 ] && grep -q -- "--cluster" "$out/err" && [ "$status2" = 2 ] && grep -q "needs a password" "$out/err2"
then ok "$name"; else bad "$name"; fi

# The cluster: plain TCP, no password (the Swift tests run one with TLS and an ACL user).
bash Tests/support/redis-cluster.sh start "$out/cluster" --owner $$ > "$out/cluster.log" 2>&1 \
  || { cat "$out/cluster.log"; echo "the cluster did not start"; exit 1; }
seeds=$(cut -d, -f1 "$out/cluster/nodes")
ccli() { redis-cli -c -p "${seeds#*:}" "$@"; }
lines 6000 c > "$out/6000.jsonl"

name="enqueue to a cluster: 6000 entries spread over 6 shards by crc16(id) mod 6, each pipeline confirmed by WAIT 1"
if "$cli" enqueue --batch 1 --cluster "$seeds" --shards 6 --wait-replicas 1 --pipeline 500 --file "$out/6000.jsonl" > "$out/stdout" 2> "$out/err" \
   && grep -qx "enqueued 6000 notifications in 6000 entries" "$out/stdout" \
   && python3 - "$out/6000.jsonl" > "$out/expected" <<'PY'
import binascii, collections, json, sys
counts = collections.Counter(binascii.crc_hqx(json.loads(l)["id"].encode(), 0) % 6 for l in open(sys.argv[1]))
for shard in range(6):
    print(shard, counts[shard])
PY
then
  : > "$out/actual"
  for s in 0 1 2 3 4 5; do echo "$s $(ccli XLEN "push:{$s}")" >> "$out/actual"; done
  if cmp -s "$out/expected" "$out/actual"; then ok "$name"; else bad "$name (expected $(tr '\n' ' ' < "$out/expected"), got $(tr '\n' ' ' < "$out/actual"))"; fi
else bad "$name"; fi

name="outcomes from a cluster: the shard's outcomes stream read on the master that serves it"
ccli XADD 'outcomes:{4}' '*' id c-9 outcome REJECTED status 400 reason BadDeviceToken apns_id y entry 2-2 > /dev/null
if "$cli" outcomes --cluster "$seeds" --shard 4 > "$out/stdout" 2> "$out/err" && grep -q "^c-9 REJECTED 400 BadDeviceToken " "$out/stdout"
then ok "$name"; else bad "$name"; fi

echo "redis: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
