#!/usr/bin/env bash
# Runs the allocation test (Tests/perf/alloc_test.c under the malloc counter) against a mock.
# usage: Tests/perf/run.sh BUILD_DIR
set -euo pipefail
cd "$(dirname "$0")/../.."
build=$(cd "${1:?usage: run.sh BUILD_DIR}" && pwd)
pki=$(pwd)/.build-pki
scripts/make-test-pki.sh "$pki" >/dev/null
out=$(mktemp -d)
export MOCK_LOG_DIR=$out
source scripts/mock-ctl.sh
trap 'mock_stop_all; rm -rf "$out"' EXIT
gcc -std=c11 -O2 -Wall -Wextra -Werror -shared -fPIC Tests/perf/malloc_counter.c -o "$out/malloc_counter.so"
gcc -std=c11 -O2 -Wall -Wextra -Werror -IInclude Tests/perf/alloc_test.c -L"$build" -lswiftpush -Wl,-rpath,"$build" -ldl -o "$out/alloc_test"
mock_start alloc "$build/swiftpush-cli" "$pki"
LD_PRELOAD="$out/malloc_counter.so" "$out/alloc_test" localhost "$MOCK_PORT" "$pki/ca.pem" "$pki/AuthKey_TESTKEY001.p8"
