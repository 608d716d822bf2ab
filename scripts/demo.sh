#!/usr/bin/env bash
# The main job, end to end: start the mock APNs server (TLS + HTTP/2 on loopback), send
# notifications through libswiftpush.so from a C program, print throughput and outcomes.
# usage: scripts/demo.sh RELEASE_DIR PKI_DIR [COUNT]
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(cd "${1:?usage: demo.sh RELEASE_DIR PKI_DIR [COUNT]}" && pwd)
pki=$(cd "${2:?}" && pwd)
count=${3:-100000}
source scripts/mock-ctl.sh
mock_workspace

build_load "$build" "$out/load"
mock_start demo "$build/swiftpush-cli" "$pki"
echo "mock APNs server: https://localhost:$MOCK_PORT (TLS 1.3, HTTP/2, token auth, test CA)"
echo "sending $count notifications through libswiftpush.so (1 connection, up to 1000 streams)..."
"$out/load" --host localhost --port "$MOCK_PORT" --ca "$pki/ca.pem" --key "$pki/AuthKey_TESTKEY001.p8" \
  --key-id TESTKEY001 --team-id TEAM123456 --topic com.example.app --count "$count" --window 10000
mock_stop_all
echo "mock server's own count:"
grep -E 'requests|accepted|rejected' "$out/mock-demo.log" | sed 's/^/  /' || true
