#!/usr/bin/env bash
# Builds and runs the C ABI end-to-end tests and the C examples against mock APNs servers.
# usage: Tests/c/run.sh BUILD_DIR   (holds libswiftpush.so and the swiftpush-cli executable)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=$(cd "${1:?usage: run.sh BUILD_DIR}" && pwd)
pki=$(pwd)/.build-pki
scripts/make-test-pki.sh "$pki" >/dev/null
out=$(mktemp -d)
export MOCK_LOG_DIR=$out
source scripts/mock-ctl.sh
trap 'mock_stop_all; rm -rf "$out"' EXIT

cflags=(-std=c11 -Wall -Wextra -Werror -O1 -g -IInclude)
ldflags=(-L"$build" -lswiftpush -Wl,-rpath,"$build")
gcc "${cflags[@]}" Tests/c/abi_e2e.c "${ldflags[@]}" -o "$out/abi_e2e"

mock_start trusted "$build/swiftpush-cli" "$pki"
trusted=$MOCK_PORT
MOCK_CERT=untrusted-server mock_start untrusted "$build/swiftpush-cli" "$pki"
untrusted=$MOCK_PORT

SWIFTPUSH_TEST_PKI=$pki SWIFTPUSH_TEST_PORT=$trusted SWIFTPUSH_TEST_UNTRUSTED_PORT=$untrusted "$out/abi_e2e"
