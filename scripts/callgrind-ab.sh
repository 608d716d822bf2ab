#!/usr/bin/env bash
# Instructions per notification of load.c (Bindings/c/examples) under callgrind, for one or more
# release builds against the same mock server, alternating, RUNS runs each: a count of
# instructions does not depend on what else the machine runs, so an A/B of a hot-path change
# holds on a busy machine (the timed A/B is scripts/bench-ab.sh, on a quiet one). The figure is
# the whole process's instructions (both threads, start-up and the TLS handshake included)
# divided by the notifications sent, as in the project's earlier A/Bs.
# usage: scripts/callgrind-ab.sh PKI_DIR RELEASE_DIR [RELEASE_DIR...]
#   CG_COUNT notifications per run (default 20000), CG_RUNS runs per build (default 2).
#   CG_SWIFT=1 also runs the Swift API's engine on the same workload (swiftpushkit-bench --mode
#   engine, from each build that has it: `swift build -c release --product swiftpushkit-bench`).
#   The first build's swiftpush-cli serves as the mock.
set -euo pipefail
cd "$(dirname "$0")/.."
pki=$(cd "${1:?usage: callgrind-ab.sh PKI_DIR RELEASE_DIR [RELEASE_DIR...]}" && pwd)
shift
builds=()
for b in "$@"; do builds+=("$(cd "$b" && pwd)"); done
count=${CG_COUNT:-20000}
runs=${CG_RUNS:-2}
command -v valgrind >/dev/null || { echo "callgrind-ab: valgrind is not installed" >&2; exit 2; }
source scripts/mock-ctl.sh
mock_workspace
for i in "${!builds[@]}"; do build_load "${builds[$i]}" "$out/load-$i"; done
mock_start cg "${builds[0]}/swiftpush-cli" "$pki"
echo "workload: $count notifications per run, 200-byte payload, 1 connection, window 10000, under callgrind"
for run in $(seq 1 "$runs"); do
  for i in "${!builds[@]}"; do
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$out/load-$i" --host localhost --port "$MOCK_PORT" \
      --ca "$pki/ca.pem" --key "$pki/AuthKey_TESTKEY001.p8" --key-id TESTKEY001 --team-id TEAM123456 \
      --topic com.example.app --count "$count" --window 10000 --quiet > "$out/cg.txt" 2>&1 || { cat "$out/cg.txt" >&2; exit 1; }
    total=$(grep -oE 'Collected : [0-9]+' "$out/cg.txt" | grep -oE '[0-9]+$')
    accepted=$(sed -nE 's/.*load-result .*accepted=([0-9]+).*/\1/p' "$out/cg.txt")
    printf 'callgrind run %d %s: %d instructions per notification (%s accepted)\n' "$run" "${builds[$i]}" \
      "$((total / count))" "$accepted"
    if [ "${CG_SWIFT:-0}" = 1 ] && [ -x "${builds[$i]}/swiftpushkit-bench" ]; then
      valgrind --tool=callgrind --callgrind-out-file=/dev/null "${builds[$i]}/swiftpushkit-bench" --mode engine --host localhost \
        --port "$MOCK_PORT" --ca "$pki/ca.pem" --key "$pki/AuthKey_TESTKEY001.p8" --key-id TESTKEY001 --team-id TEAM123456 \
        --topic com.example.app --count "$count" --window 10000 > "$out/cg.txt" 2>&1 || { cat "$out/cg.txt" >&2; exit 1; }
      total=$(grep -oE 'Collected : [0-9]+' "$out/cg.txt" | grep -oE '[0-9]+$')
      accepted=$(sed -nE 's/.*load-result .*accepted=([0-9]+).*/\1/p' "$out/cg.txt")
      printf 'callgrind run %d %s: Swift engine %d instructions per notification (%s accepted)\n' "$run" "${builds[$i]}" \
        "$((total / count))" "$accepted"
    fi
  done
done
