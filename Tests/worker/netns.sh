#!/usr/bin/env bash
# Several "machines" on one: Redis, the mock APNs server and two workers each in a network
# namespace of its own (ip netns + veth, joined by a bridge in a fifth namespace), talking over
# 10.213.7.0/24 inside those namespaces only. The same exactly-once check as on loopback.
# usage: Tests/worker/netns.sh BUILD_DIR [COUNT]   (needs root; skips with a message otherwise)
# Prints "worker-netns: N passed, N failed[, N skipped]".
set -euo pipefail
cd "$(dirname "$0")/../.."
build=$(cd "${1:?usage: netns.sh BUILD_DIR [COUNT]}" && pwd)
count=${2:-20000}
cli=$build/swiftpush-cli
name="several machines: Redis, the mock and 2 workers in separate network namespaces: every id exactly one outcome"

skip() { echo "skipped: $name ($1)"; echo "worker-netns: 0 passed, 0 failed, 1 skipped"; exit 0; }
[ "$(id -u)" -eq 0 ] || skip "network namespaces need root"
command -v ip >/dev/null || skip "iproute2 (ip) is not installed"
prefix=spw$$
hosts=(hub redis mock w1 w2)
ip netns add "$prefix-probe" 2>/dev/null || skip "this sandbox does not permit 'ip netns add'"
ip netns del "$prefix-probe"

source scripts/mock-ctl.sh
test_pki
out=$(mktemp -d)
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  for h in "${hosts[@]}"; do ip netns del "$prefix-$h" 2>/dev/null || true; done
  rm -rf "$out"
}
trap cleanup EXIT
in_ns() { local h=$1; shift; ip netns exec "$prefix-$h" "$@"; }

# The hub holds a bridge; every other host gets a veth pair with one end on the bridge.
for h in "${hosts[@]}"; do ip netns add "$prefix-$h"; in_ns "$h" ip link set lo up; done
in_ns hub ip link add br0 type bridge
in_ns hub ip link set br0 up
declare -A addr=([redis]=10.213.7.1 [mock]=10.213.7.2 [w1]=10.213.7.3 [w2]=10.213.7.4)
for h in redis mock w1 w2; do
  ip link add "$prefix$h" type veth peer name "${prefix}h$h"
  ip link set "$prefix$h" netns "$prefix-$h"
  ip link set "${prefix}h$h" netns "$prefix-hub"
  in_ns hub ip link set "${prefix}h$h" master br0 up
  in_ns "$h" ip addr add "${addr[$h]}/24" dev "$prefix$h"
  in_ns "$h" ip link set "$prefix$h" up
done

# A server certificate for the mock's address, from the test CA.
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$out/mock.key" -out "$out/mock.csr" \
  -subj /CN=apns-mock 2>/dev/null
printf 'subjectAltName=IP:%s\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n' "${addr[mock]}" > "$out/mock.ext"
openssl x509 -req -in "$out/mock.csr" -CA "$pki/ca.pem" -CAkey "$pki/ca.key" -CAcreateserial -CAserial "$out/ca.srl" \
  -days 2 -extfile "$out/mock.ext" -out "$out/mock.pem" 2>/dev/null

wait_until() {
  local limit=$1; shift
  local end=$((SECONDS + limit))
  until "$@"; do [ "$SECONDS" -lt "$end" ] || return 1; sleep 0.1; done
}
rcli() { in_ns w1 redis-cli -h "${addr[redis]}" "$@"; }

mkdir -p "$out/redis"
# Started with `ip netns exec` directly (not through in_ns): it execs the program, so $! is the
# program's own pid, and cleanup's kill reaches it.
ip netns exec "$prefix-redis" redis-server --bind "${addr[redis]}" --port 6379 --dir "$out/redis" --appendonly yes --save "" \
  --protected-mode no > "$out/redis.log" 2>&1 &
PIDS+=($!)
gone=00000000000000000000000000000000000000000000000000000000000000a1
ip netns exec "$prefix-mock" "$cli" mock --cert "$out/mock.pem" --key "$out/mock.key" --host "${addr[mock]}" --port 2197 \
  --key-id TESTKEY001 --team-id TEAM123456 --auth-key "$pki/AuthKey_TESTKEY001.pub.pem" \
  --unregistered "$gone" --lenient-initial-limit > "$out/mock.log" 2>&1 &
PIDS+=($!)
fail=0
wait_until 20 sh -c "ip netns exec $prefix-w1 redis-cli -h ${addr[redis]} ping 2>/dev/null | grep -q PONG" || { cat "$out/redis.log"; fail=1; }
wait_until 20 grep -q "listening on" "$out/mock.log" || { cat "$out/mock.log"; fail=1; }
# Both worker hosts reach the mock and Redis across the bridge before anything is timed.
for h in w1 w2; do
  wait_until 20 ip netns exec "$prefix-$h" bash -c "</dev/tcp/${addr[mock]}/2197 && </dev/tcp/${addr[redis]}/6379" 2>/dev/null \
    || { echo "host $h cannot reach the mock or Redis"; fail=1; }
done

cat > "$out/worker.json" <<JSON
{"redis": {"host": "${addr[redis]}", "port": 6379}, "shard": "ns",
 "apps": {"demo": {"key_file": "$pki/AuthKey_TESTKEY001.p8", "key_id": "TESTKEY001", "team_id": "TEAM123456",
                   "host": "${addr[mock]}", "port": 2197, "ca_file": "$pki/ca.pem", "topics": ["com.example.app"]}}}
JSON
python3 - "$count" "$gone" > "$out/ns.jsonl" <<'PY'
import json, sys
n, gone = int(sys.argv[1]), sys.argv[2]
for i in range(n):
    t = gone if i % 1000 == 999 else "ff%062x" % (i % 997 + 1)
    print(json.dumps({"id": f"ns-{i}", "app": "demo", "token": t, "payload": {"aps": {"alert": f"hello {i}"}}}))
PY
ok=0
if [ "$fail" -eq 0 ] && in_ns w1 "$cli" enqueue --batch 1 --redis "${addr[redis]}:6379" --shard ns --file "$out/ns.jsonl" > /dev/null; then
  ip netns exec "$prefix-w1" "$cli" worker --config "$out/worker.json" --consumer ns-w1 2> "$out/w1.err" & w1=$!; PIDS+=($w1)
  ip netns exec "$prefix-w2" "$cli" worker --config "$out/worker.json" --consumer ns-w2 2> "$out/w2.err" & w2=$!; PIDS+=($w2)
  if wait_until 300 sh -c "[ \$(ip netns exec $prefix-w1 redis-cli -h ${addr[redis]} XLEN 'outcomes:{ns}') -ge $count ]"; then
    kill -TERM "$w1" "$w2"
    # Bounded: a worker that does not drain within 30 s is killed and the test fails.
    wait_until 30 sh -c "! kill -0 $w1 2>/dev/null && ! kill -0 $w2 2>/dev/null" || kill -9 "$w1" "$w2" 2>/dev/null || true
    s1=0; wait "$w1" || s1=$?
    s2=0; wait "$w2" || s2=$?
    in_ns w1 "$cli" outcomes --redis "${addr[redis]}:6379" --shard ns --json > "$out/ns.outcomes"
    in_ns w1 "$cli" outcomes --redis "${addr[redis]}:6379" --shard ns --unregistered --json > "$out/ns.unregistered"
    if [ "$s1" -eq 0 ] && [ "$s2" -eq 0 ] && [ "$(rcli XPENDING 'push:{ns}' senders | head -1)" -eq 0 ] \
       && grep -q "accepted=[1-9]" "$out/w1.err" && grep -q "accepted=[1-9]" "$out/w2.err" \
       && python3 Tests/worker/check_outcomes.py "$out/ns.jsonl" "$out/ns.outcomes" "$out/ns.unregistered" "$gone"; then
      ok=1
    fi
  fi
fi
if [ "$ok" -eq 1 ]; then
  echo "ok: $name ($count entries over veth + bridge)"
  echo "worker-netns: 1 passed, 0 failed"
else
  echo "FAILED: $name (outcomes: $(rcli XLEN 'outcomes:{ns}' 2>/dev/null || echo ?))"
  tail -n 5 "$out"/*.err "$out/mock.log" 2>/dev/null | sed 's/^/    /'
  echo "worker-netns: 0 passed, 1 failed"
  exit 1
fi
