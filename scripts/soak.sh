#!/usr/bin/env bash
# Soak (issue #8, item 3): COUNT notifications (default 5,000,000) through one client of the
# release libswiftpush.so, in rounds, against a mock that sends GOAWAY after every
# GOAWAY_AFTER requests per connection (default 20,000), so that the pool replaces its
# connections hundreds of times. After every round Tests/soak/soak.c samples resident memory
# (/proc/self/statm) and open descriptors (/proc/self/fd) and prints the curve; it fails when
# memory grows by more than SOAK_MAX_RSS_GROWTH_KB (default 8192) after the warm-up, when
# descriptors grow at all, or when a notification is not accepted.
#   scripts/soak.sh RELEASE_DIR [COUNT] [GOAWAY_AFTER]
# RELEASE_DIR holds libswiftpush.so and swiftpush-cli (make release: .build-release/release).
# Env: SOAK_ROUNDS (50), SOAK_CONNECTIONS (2), SOAK_WINDOW (10000), SOAK_TIMEOUT (1800 s).
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(cd "${1:?usage: soak.sh RELEASE_DIR [COUNT] [GOAWAY_AFTER]}" && pwd)
count=${2:-5000000}
goaway_after=${3:-20000}
source scripts/mock-ctl.sh
test_pki
mock_workspace

build_c "$build" Tests/soak/soak.c "$out/soak"
bench_cpus # the server on one core, the client on the other, when there are two
MOCK_RUNNER=$server_cpu mock_start soak "$build/swiftpush-cli" "$pki" --goaway-after "$goaway_after"
echo "soak: $count notifications, mock on port $MOCK_PORT with --goaway-after $goaway_after"
status=0
timeout "${SOAK_TIMEOUT:-1800}" $client_cpu "$out/soak" --port "$MOCK_PORT" --ca "$pki/ca.pem" \
  --key "$pki/AuthKey_TESTKEY001.p8" --count "$count" --rounds "${SOAK_ROUNDS:-50}" \
  --connections "${SOAK_CONNECTIONS:-2}" --window "${SOAK_WINDOW:-10000}" \
  --max-rss-growth-kb "${SOAK_MAX_RSS_GROWTH_KB:-8192}" || status=$?
if [ "$status" -ne 0 ]; then
  echo "--- mock log:" >&2; tail -n 20 "$out/mock-soak.log" >&2
  echo "FAILED: soak (exit $status)" >&2
  exit 1
fi
echo "ok: soak of $count notifications kept memory and descriptors flat"
