#!/usr/bin/env bash
# Builds and runs the C ABI end-to-end tests and the C examples against mock APNs servers.
# usage: Tests/c/run.sh BUILD_DIR   (holds libswiftpush.so and the swiftpush-cli executable)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=$(cd "${1:?usage: run.sh BUILD_DIR}" && pwd)
source scripts/mock-ctl.sh
test_pki
mock_workspace

build_c "$build" Tests/c/abi_e2e.c "$out/abi_e2e"

mock_start trusted "$build/swiftpush-cli" "$pki"
trusted=$MOCK_PORT
MOCK_CERT=untrusted-server mock_start untrusted "$build/swiftpush-cli" "$pki"
untrusted=$MOCK_PORT

SWIFTPUSH_TEST_PKI=$pki SWIFTPUSH_TEST_PORT=$trusted SWIFTPUSH_TEST_UNTRUSTED_PORT=$untrusted "$out/abi_e2e"

# Broadcast push: channel management on the mock's second listener, broadcasts on its first.
build_c "$build" Tests/c/broadcast_e2e.c "$out/broadcast_e2e"
mock_start broadcast "$build/swiftpush-cli" "$pki" --channel-port-file "$out/channel-port" --channel-limit 3 \
  --broadcast-disabled com.example.disabled
SWIFTPUSH_TEST_PKI=$pki SWIFTPUSH_TEST_PORT=$MOCK_PORT SWIFTPUSH_TEST_CHANNEL_PORT=$(cat "$out/channel-port") "$out/broadcast_e2e"
# The README's broadcast example in C, exactly as written there, against the same mock.
python3 scripts/readme-block.py README.md "Broadcast push" c > "$out/readme_broadcast.c"
build_c "$build" "$out/readme_broadcast.c" "$out/readme_broadcast"
mkdir -p "$out/readme-broadcast" && cp "$pki/AuthKey_TESTKEY001.p8" "$out/readme-broadcast/"
(cd "$out/readme-broadcast" && APNS_HOST=localhost APNS_PORT=$MOCK_PORT APNS_CA_FILE=$pki/ca.pem APNS_CHANNEL_HOST=localhost \
  APNS_CHANNEL_PORT=$(cat "$out/channel-port") "$out/readme_broadcast") > "$out/readme-broadcast.txt"
grep -qE '^1 200 [0-9a-f-]{36}$' "$out/readme-broadcast.txt" \
  || { cat "$out/readme-broadcast.txt"; echo "FAILED: the README's broadcast example in C"; exit 1; }
echo "ok: the README's broadcast example in C created a channel and broadcast to it: $(cat "$out/readme-broadcast.txt")"

# The payload builder and the topic helper through the C ABI (no server needed).
build_c "$build" Tests/c/payload_test.c "$out/payload_test"
"$out/payload_test"

# The smallest complete sending program with the payload builder, against the trusted mock.
build_c "$build" Bindings/c/examples/send_one.c "$out/send_one"
"$out/send_one" "$pki/AuthKey_TESTKEY001.p8" TESTKEY001 TEAM123456 com.example.app \
  00fc13adff785122b4ad28809a3420982341241421348097878e577c991de8f0 localhost "$trusted" "$pki/ca.pem"
echo "ok: Bindings/c/examples/send_one.c sent one notification"

# The README's C example, exactly as written there: compiled, then run where its key file is.
python3 - README.md "$out/readme_example.c" <<'PY'
import re, sys
blocks = re.findall(r"```c\n(.*?)```", open(sys.argv[1]).read(), re.S)
assert blocks, "README.md has no ```c block"
open(sys.argv[2], "w").write(blocks[0])
PY
build_c "$build" "$out/readme_example.c" "$out/readme_example"
mkdir -p "$out/readme" && cp "$pki/AuthKey_TESTKEY001.p8" "$out/readme/"
(cd "$out/readme" && APNS_HOST=localhost APNS_PORT=$trusted APNS_CA_FILE=$pki/ca.pem "$out/readme_example") > "$out/readme.txt"
grep -q '^1 200 ' "$out/readme.txt" || { cat "$out/readme.txt"; echo "FAILED: the README's C example"; exit 1; }
echo "ok: the README's C example sent one notification: $(cat "$out/readme.txt")"

# The token-file sender with results by callback: 5,000 tokens, two of them unregistered.
gone1=aa000000000000000000000000000000000000000000000000000000000000aa
gone2=bb000000000000000000000000000000000000000000000000000000000000bb
mock_start tokens "$build/swiftpush-cli" "$pki" --unregistered "$gone1=1700000000001" --unregistered "$gone2=1700000000002"
python3 -c "
import sys
with open(sys.argv[1], 'w') as f:
    f.write('# tokens\n')
    for i in range(5000):
        f.write(('%064x' % (i + 1)) + '\n')
    f.write(sys.argv[2] + '\n' + sys.argv[3] + '\n')
" "$out/tokens.txt" "$gone1" "$gone2"
build_c "$build" Bindings/c/examples/send_tokens.c "$out/send_tokens"
status=0
"$out/send_tokens" "$out/tokens.txt" '{"aps":{"alert":"hi"}}' com.example.app "$pki/AuthKey_TESTKEY001.p8" TESTKEY001 \
  TEAM123456 localhost "$MOCK_PORT" "$pki/ca.pem" > "$out/tokens.out" || status=$?
if [ "$status" = 1 ] && grep -q '^5002 tokens: 5002 sent (0 refused locally), 5000 accepted, 2 rejected, 0 failed$' "$out/tokens.out" \
   && grep -q "^unregistered $gone1 1700000000001$" "$out/tokens.out" && grep -q "^unregistered $gone2 1700000000002$" "$out/tokens.out"; then
  echo "ok: Bindings/c/examples/send_tokens.c: 5,002 tokens from a file, results by callback, 410s reported"
else
  cat "$out/tokens.out"; echo "FAILED: send_tokens.c (exit $status)"; exit 1
fi

# The bad-input matrix of the C ABI: NULLs, absurd sizes, invalid UTF-8, oversized values, bad
# keys, handles of the wrong kind (no server needed).
build_c "$build" Tests/c/bad_input.c "$out/bad_input"
SWIFTPUSH_TEST_PKI=$pki "$out/bad_input"

# The library connects to the configured host and nowhere else: the README example under strace
# makes only TCP connections to the mock's port on loopback. (Name resolution may talk to a DNS
# server on port 53 on the library's behalf; glibc answers "localhost" from /etc/hosts.)
if command -v strace >/dev/null && strace -f -o /dev/null true 2>/dev/null; then
  (cd "$out/readme" && APNS_HOST=localhost APNS_PORT=$trusted APNS_CA_FILE=$pki/ca.pem \
    strace -f -e trace=connect -o "$out/strace.log" "$out/readme_example") > /dev/null
  grep -E 'connect\(.*sa_family=AF_INET6?' "$out/strace.log" > "$out/inet-connects.log" || true
  others=$(grep -vE "htons\(($trusted|53)\)" "$out/inet-connects.log" || true)
  if [ -s "$out/inet-connects.log" ] && [ -z "$others" ] \
     && ! grep "htons($trusted)" "$out/inet-connects.log" | grep -vqE 'inet_addr\("127\.0\.0\.1"\)|inet_pton\(AF_INET6, "::1"'; then
    echo "ok: the library connected only to localhost:$trusted ($(grep -c "htons($trusted)" "$out/inet-connects.log") connect calls)"
  else
    cat "$out/strace.log"; echo "FAILED: a connection to somewhere other than the configured host"; exit 1
  fi
else
  echo "skipped: strace is not available (the Swift SecurityTests check connections without it)"
fi

# A deadline per notification (push_notification.deadline_ms): a mock that never answers one
# token, and a listener that never completes a handshake (in the test).
build_c "$build" Tests/c/deadline_e2e.c "$out/deadline_e2e"
mock_start stall "$build/swiftpush-cli" "$pki" --stall-token 5a11ed005a11ed005a11ed005a11ed005a11ed005a11ed005a11ed005a11ed00
SWIFTPUSH_TEST_PKI=$pki SWIFTPUSH_TEST_PORT=$MOCK_PORT "$out/deadline_e2e"
