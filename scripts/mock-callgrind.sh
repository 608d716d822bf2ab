#!/usr/bin/env bash
# The mock's instructions per answer, counted by callgrind: an A/B of mock changes that the load
# of a shared machine does not disturb (scripts/mock-capacity.sh times the same thing, which only
# a quiet machine can). For each CLI, and for no delay and a delay of CG_DELAY ms (default 20),
# the mock runs under `valgrind --tool=callgrind`; load.c (the benchmark's workload,
# bench_workload, 1 connection) sends CG_WARMUP notifications (default 5000), the counters are
# zeroed, it sends CG_COUNT more (default 50000) on a new connection, and the counters are dumped:
# the mock's instructions over those, connection set-up and token check included, divided by
# CG_COUNT. Several CLIs are measured one after the other in the same run. The counts repeat
# within about 0.1% from run to run (batching varies a little with timing).
# Last line per CLI and delay (machine-readable):
#   swiftpush-mock-callgrind delay_ms=D count=N instructions_per_answer=I cli=PATH
# usage: scripts/mock-callgrind.sh RELEASE_DIR PKI_DIR [CLI...]   (default CLI: RELEASE_DIR/swiftpush-cli)
#   RELEASE_DIR: where libswiftpush.so (load.c's client) and swiftpush-cli (the JWT) are
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(cd "${1:?usage: mock-callgrind.sh RELEASE_DIR PKI_DIR [CLI...]}" && pwd)
pki=$(cd "${2:?}" && pwd)
shift 2
clis=("$@")
[ ${#clis[@]} -gt 0 ] || clis=("$build/swiftpush-cli")
count=${CG_COUNT:-50000}
warmup=${CG_WARMUP:-5000}
delay=${CG_DELAY:-20}
command -v valgrind > /dev/null && command -v callgrind_control > /dev/null ||
  { echo "mock-callgrind: needs valgrind (apt-get install valgrind)" >&2; exit 2; }
source scripts/mock-ctl.sh
mock_workspace
bench_workload "$build" "$pki"

send() { # COUNT
  "$out/load" --host localhost --port "$MOCK_PORT" --ca "$pki/ca.pem" --key "$pki/AuthKey_TESTKEY001.p8" \
    --key-id TESTKEY001 --team-id TEAM123456 --topic com.example.app --count "$1" --window 10000 \
    --token "$token" --quiet > "$out/load.txt" 2>&1 || { cat "$out/load.txt" >&2; return 1; }
  grep -q " accepted=$1 " "$out/load.txt" || { cat "$out/load.txt" >&2; echo "mock-callgrind: not all accepted" >&2; return 1; }
}

for cli in "${clis[@]}"; do
  # Valgrind 3.19 cannot read the DWARF 5 the Swift toolchain writes: count a copy without it.
  strip --strip-debug -o "$out/cli" "$cli"
  for d in 0 "$delay"; do
    portfile="$out/port"
    rm -f "$portfile" "$out"/callgrind.out.*
    valgrind --tool=callgrind --callgrind-out-file="$out/callgrind.out.%p" \
      "$out/cli" mock --cert "$pki/server.pem" --key "$pki/server.key" --port 0 --port-file "$portfile" \
      --key-id TESTKEY001 --team-id TEAM123456 --auth-key "$pki/AuthKey_TESTKEY001.pub.pem" \
      --delay-ms "$d" > "$out/mock.log" 2>&1 &
    pid=$!
    MOCK_PIDS+=("$pid")
    # Under valgrind the mock takes seconds to start.
    for _ in $(seq 1 600); do
      [ -s "$portfile" ] && break
      kill -0 "$pid" 2>/dev/null || { cat "$out/mock.log" >&2; exit 1; }
      sleep 0.1
    done
    MOCK_PORT=$(cat "$portfile")
    send "$warmup"
    callgrind_control -z "$pid" > /dev/null
    send "$count"
    callgrind_control -d "$pid" > /dev/null
    mock_stop_all
    # The dump holds what ran since the counters were zeroed; the summary line is its total.
    total=$(cat "$out"/callgrind.out.*.[0-9]* | awk '/^summary:/ {s += $2} END {print s + 0}')
    echo "swiftpush-mock-callgrind delay_ms=$d count=$count" \
      "instructions_per_answer=$(awk -v t="$total" -v n="$count" 'BEGIN {printf "%.0f", t / n}') cli=$cli"
  done
done
