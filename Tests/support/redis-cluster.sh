#!/usr/bin/env bash
# A Redis Cluster of 3 masters + 3 replicas on loopback, for tests (Tests/SwiftPushRedisTests,
# Tests/redis/run.sh, the worker's cluster test). Every wait is on a condition, bounded in time.
#
#   redis-cluster.sh start DIR [--tls PKI] [--auth USER PASSWORD] [--owner PID]
#       Six `redis-server --cluster-enabled yes --cluster-node-timeout 1000 --appendonly yes
#       --repl-diskless-sync-delay 0` on free loopback ports (and free cluster-bus ports), joined
#       by `redis-cli --cluster create ... --cluster-replicas 1`; returns once every node says
#       cluster_state:ok and every replica's link to its master is up. With --tls PKI, nodes
#       listen only on TLS (a certificate for localhost and 127.0.0.1 made in DIR from PKI/ca.pem
#       and PKI/ca.key, as scripts/make-test-pki.sh makes them; clients need no certificate)
#       and talk TLS to each other. With --auth, the ACL user USER (all commands, all keys) is
#       the only one (the default user is off) and replicas authenticate as it.
#       With --owner, the nodes are SIGKILLed and DIR removed once process PID has gone (a test
#       runner leaves no cluster behind, even when it crashed).
#       Writes in DIR: ports (one per line, in creation order), nodes (HOST:PORT,... for a seed
#       list), pids, and cli (a redis-cli command line with the TLS/auth options, for `$(cat DIR/cli)`).
#   redis-cluster.sh stop DIR            SIGKILLs every node it started (by the pids in DIR).
#   redis-cluster.sh kill DIR PORT       SIGKILLs the node on PORT (a master's death, for failover tests).
#   redis-cluster.sh restart DIR PORT    starts the node on PORT again, as it was started (its
#       nodes.conf and AOF: a killed master comes back as a replica of the one promoted in its place).
#   redis-cluster.sh wait-linked DIR [SECONDS]   waits until every live replica's link to its
#       master is up (a node restarted above has synced), default 30 s.
#   redis-cluster.sh wait-ok DIR [SECONDS]   waits until every live node says cluster_state:ok
#       and sees every slot served by a live master (after a failover), default 30 s.
#   redis-cluster.sh master-of DIR KEY   prints HOST:PORT of the live master that serves KEY's slot.
set -euo pipefail

die() { echo "redis-cluster.sh: $*" >&2; exit 1; }
command -v redis-server >/dev/null && command -v redis-cli >/dev/null ||
  die "redis-server and redis-cli are needed (scripts/install-deps.sh installs redis-server and redis-tools)"

cmd=${1:-}; dir=${2:-}
[ -n "$cmd" ] && [ -n "$dir" ] || die "usage: redis-cluster.sh start|stop|kill|wait-ok|master-of DIR ..."

# redis-cli with this cluster's options, against PORT.
cli() { local port=$1; shift; $(cat "$dir/cli") -p "$port" "$@" 2>/dev/null; }

live_ports() {
  local p
  while read -r p; do
    cli "$p" PING 2>/dev/null | grep -q PONG && echo "$p"
  done < "$dir/ports"
  return 0
}

# The masters NODE_PORT's CLUSTER NODES names as serving slots, not failed: one line per
# master, "PORT FIRST-LAST FIRST-LAST ...".
masters_seen_by() {
  cli "$1" CLUSTER NODES | tr -d '\r' | awk '$3 ~ /master/ && $3 !~ /fail/ && NF > 8 {
    split($2, a, "[:@]"); line = a[2]; for (i = 9; i <= NF; i++) line = line " " $i; print line }'
}

# Succeeds when every live node reports cluster_state:ok and sees all 16384 slots served by
# live masters.
cluster_ok() {
  local p live
  live=$(live_ports)
  [ -n "$live" ] || return 1
  for p in $live; do
    cli "$p" CLUSTER INFO | tr -d '\r' | grep -q '^cluster_state:ok$' || return 1
    masters_seen_by "$p" | python3 -c '
import sys
live = set(sys.argv[1].split())
covered, ok = 0, True
for line in sys.stdin:
    port, *ranges = line.split()
    ok = ok and port in live
    for r in ranges:
        if r.startswith("["): continue  # a slot in migration
        a, _, b = r.partition("-")
        covered += int(b or a) - int(a) + 1
sys.exit(0 if ok and covered == 16384 else 1)' "$live" || return 1
  done
}

# Every replica's link to its master is up, and every master has a replica online (a node
# restarted after a failover reports itself a master until the cluster tells it otherwise: it
# is counted once it has synced as a replica).
replicas_linked() {
  local p
  for p in $(live_ports); do
    local info
    info=$(cli "$p" INFO replication | tr -d '\r')
    if grep -q '^role:slave$' <<<"$info"; then
      grep -q '^master_link_status:up$' <<<"$info" || return 1
    else
      grep -q '^slave0:.*state=online' <<<"$info" || return 1
    fi
  done
}

wait_for() { # SECONDS WHAT COMMAND...
  local seconds=$1 what=$2; shift 2
  local deadline=$(( $(date +%s) + seconds ))
  until "$@"; do
    [ "$(date +%s)" -lt "$deadline" ] || die "$what: not reached within ${seconds} s"
    sleep 0.1 # polling: a cluster announces its state to nobody
  done
}

case $cmd in
start)
  shift 2
  tls="" user="" password="" owner=""
  while [ $# -gt 0 ]; do
    case $1 in
      --tls) tls=$(cd "$2" && pwd); shift 2 ;;
      --auth) user=$2; password=$3; shift 3 ;;
      --owner) owner=$2; shift 2 ;;
      *) die "unknown option $1" ;;
    esac
  done
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  : > "$dir/pids"
  # Twelve distinct free ports (six for clients, six for the cluster bus), held together while chosen.
  mapfile -t free < <(python3 -c '
import socket
socks = [socket.socket() for _ in range(12)]
for s in socks: s.bind(("127.0.0.1", 0))
print("\n".join(str(s.getsockname()[1]) for s in socks))')
  cli_line="redis-cli -h 127.0.0.1"
  auth_args=() tls_args=()
  if [ -n "$tls" ]; then
    # The nodes' own certificate, from the PKI's CA: the cluster bus and replication verify
    # the connecting node's certificate as a client one, so it needs clientAuth as well as
    # serverAuth (the PKI's server.pem has serverAuth only).
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$dir/node.key" -out "$dir/node.csr" \
      -subj "/CN=localhost" 2>/dev/null
    printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\nbasicConstraints=CA:FALSE\n' > "$dir/node.ext"
    openssl x509 -req -in "$dir/node.csr" -CA "$tls/ca.pem" -CAkey "$tls/ca.key" -CAcreateserial -CAserial "$dir/ca.srl" \
      -out "$dir/node.pem" -days 30 -extfile "$dir/node.ext" 2>/dev/null || die "cannot make the nodes' certificate"
    tls_args=(--tls-cert-file "$dir/node.pem" --tls-key-file "$dir/node.key" --tls-ca-cert-file "$tls/ca.pem"
              --tls-auth-clients no --tls-cluster yes --tls-replication yes)
    cli_line+=" --tls --cacert $tls/ca.pem"
  fi
  if [ -n "$user" ]; then
    auth_args=(--user default off --user "$user" on ">$password" "~*" "&*" "+@all" --masteruser "$user" --masterauth "$password")
    cli_line+=" --user $user --pass $password --no-auth-warning"
  fi
  echo "$cli_line" > "$dir/cli"
  : > "$dir/ports"
  for i in 0 1 2 3 4 5; do
    port=${free[$i]} bus=${free[$((i + 6))]}
    mkdir -p "$dir/$port"
    if [ -n "$tls" ]; then listen=(--port 0 --tls-port "$port"); else listen=(--port "$port"); fi
    args=(redis-server "${listen[@]}" --bind 127.0.0.1 --cluster-port "$bus" --dir "$dir/$port"
      --cluster-enabled yes --cluster-config-file nodes.conf --cluster-node-timeout 1000
      --appendonly yes --repl-diskless-sync-delay 0 --save "" --daemonize no
      --logfile "$dir/$port/redis.log" "${tls_args[@]}" "${auth_args[@]}")
    # The command line, kept for a restart (each word quoted for bash).
    printf '%q ' "${args[@]}" > "$dir/$port/command"
    "${args[@]}" </dev/null >/dev/null 2>&1 &
    echo $! >> "$dir/pids"
    echo "$port" >> "$dir/ports"
  done
  if [ -n "$owner" ]; then
    # A watcher, detached from the caller's output: checks once a second that the owner lives.
    nohup bash -c 'while kill -0 "$1" 2>/dev/null && [ -f "$2/pids" ]; do sleep 1; done
                   [ -f "$2/pids" ] && xargs kill -9 < "$2/pids" 2>/dev/null && sleep 1 && rm -rf "$2"' _ "$owner" "$dir" >/dev/null 2>&1 &
  fi
  # A node that exited (a bad option) fails the start at once, with its log.
  node_up() { cli "$1" PING | grep -q PONG || { kill -0 "$2" 2>/dev/null || { tail -5 "$dir/$1/redis.log" >&2; die "node $1 exited"; }; false; }; }
  paste "$dir/ports" "$dir/pids" | while read -r port pid; do
    wait_for 20 "node $port answering" node_up "$port" "$pid"
  done
  nodes=$(sed 's/^/127.0.0.1:/' "$dir/ports" | paste -sd' ')
  # shellcheck disable=SC2086 # the cli line and the node list are word lists
  $(cat "$dir/cli") --cluster create $nodes --cluster-replicas 1 --cluster-yes > "$dir/create.log" 2>&1 ||
    { cat "$dir/create.log" >&2; die "redis-cli --cluster create failed"; }
  sed 's/^/127.0.0.1:/' "$dir/ports" | paste -sd, > "$dir/nodes"
  wait_for 30 "cluster_state:ok on every node" cluster_ok
  wait_for 30 "every replica linked to its master" replicas_linked
  ;;
stop)
  [ -f "$dir/pids" ] || exit 0
  while read -r pid; do kill -9 "$pid" 2>/dev/null || true; done < "$dir/pids"
  while read -r pid; do
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
  done < "$dir/pids"
  rm -f "$dir/pids" # also ends the --owner watcher
  ;;
kill)
  port=${3:?usage: redis-cluster.sh kill DIR PORT}
  pid=$(sed -n "$(grep -n "^$port\$" "$dir/ports" | cut -d: -f1)p" "$dir/pids")
  [ -n "$pid" ] || die "no node on port $port"
  kill -9 "$pid"
  for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || exit 0; sleep 0.05; done
  die "node $port (pid $pid) did not die"
  ;;
restart)
  port=${3:?usage: redis-cluster.sh restart DIR PORT}
  line=$(grep -n "^$port\$" "$dir/ports" | cut -d: -f1)
  [ -n "$line" ] || die "no node on port $port"
  pid=$(sed -n "${line}p" "$dir/pids")
  ! kill -0 "$pid" 2>/dev/null || die "node $port (pid $pid) is still running"
  eval "$(cat "$dir/$port/command")" '</dev/null >/dev/null 2>&1 &'
  pid=$!
  sed -i "${line}s/.*/$pid/" "$dir/pids"
  wait_for 20 "node $port answering" sh -c "$(cat "$dir/cli") -p $port PING 2>/dev/null | grep -q PONG"
  ;;
wait-ok)
  wait_for "${3:-30}" "cluster_state:ok with every slot on a live master" cluster_ok
  ;;
wait-linked)
  wait_for "${3:-30}" "every replica linked to its master" replicas_linked
  ;;
master-of)
  key=${3:?usage: redis-cluster.sh master-of DIR KEY}
  for p in $(live_ports); do
    slot=$(cli "$p" CLUSTER KEYSLOT "$key")
    masters_seen_by "$p" | python3 -c '
import sys
slot = int(sys.argv[1])
for line in sys.stdin:
    port, *ranges = line.split()
    for r in ranges:
        if r.startswith("["): continue
        a, _, b = r.partition("-")
        if int(a) <= slot <= int(b or a):
            print("127.0.0.1:" + port)
            sys.exit(0)
sys.exit(1)' "$slot"
    exit $?
  done
  die "no live node"
  ;;
*)
  die "unknown command $cmd"
  ;;
esac
