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

# The payload builder and the topic helper through the C ABI (no server needed).
gcc "${cflags[@]}" Tests/c/payload_test.c "${ldflags[@]}" -o "$out/payload_test"
"$out/payload_test"

# The smallest complete sending program (the README's C example), against the trusted mock.
gcc "${cflags[@]}" Bindings/c/examples/send_one.c "${ldflags[@]}" -o "$out/send_one"
"$out/send_one" "$pki/AuthKey_TESTKEY001.p8" TESTKEY001 TEAM123456 com.example.app \
  00fc13adff785122b4ad28809a3420982341241421348097878e577c991de8f0 localhost "$trusted" "$pki/ca.pem"
echo "ok: Bindings/c/examples/send_one.c sent one notification"
