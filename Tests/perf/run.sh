#!/usr/bin/env bash
# Runs the allocation test (Tests/perf/alloc_test.c under the malloc counter) against a mock.
# usage: Tests/perf/run.sh BUILD_DIR
set -euo pipefail
cd "$(dirname "$0")/../.."
build=$(cd "${1:?usage: run.sh BUILD_DIR}" && pwd)
source scripts/mock-ctl.sh
test_pki
mock_workspace
gcc -std=c11 -O2 -Wall -Wextra -Werror -shared -fPIC Tests/perf/malloc_counter.c -o "$out/malloc_counter.so"
build_c "$build" Tests/perf/alloc_test.c "$out/alloc_test" -ldl
mock_start alloc "$build/swiftpush-cli" "$pki"
LD_PRELOAD="$out/malloc_counter.so" "$out/alloc_test" localhost "$MOCK_PORT" "$pki/ca.pem" "$pki/AuthKey_TESTKEY001.p8"
