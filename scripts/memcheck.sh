#!/usr/bin/env bash
# Valgrind memcheck of the C examples against the mock (issue #8, item 3): no leaks (definite
# or indirect) and no invalid accesses, through libswiftpush.so from BUILD_DIR.
#   scripts/memcheck.sh BUILD_DIR      (holds libswiftpush.so and swiftpush-cli)
# Runs, each under valgrind --leak-check=full --errors-for-leak-kinds=definite,indirect
# --error-exitcode=1 (the mock runs outside valgrind):
#   1. Bindings/c/examples/send_one.c: one notification, payload builder, open/send/poll/close/free;
#   2. Bindings/c/examples/load.c: 3,000 notifications over 2 connections with a GOAWAY every
#      700 requests per connection (connections replaced while streams are in flight);
#   3. load.c: 2,000 notifications with refused streams and 503 answers (resend and retry paths).
# No suppressions: the Swift runtime's and OpenSSL's one-time allocations are "still
# reachable" or "possibly lost" (metadata caches), which are not counted as errors.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { apt-get install -y valgrind >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y valgrind >/dev/null; }; }
build=$(cd "${1:?usage: memcheck.sh BUILD_DIR}" && pwd)
source scripts/mock-ctl.sh
test_pki
mock_workspace
build_c "$build" Bindings/c/examples/send_one.c "$out/send_one"
build_load "$build" "$out/load"

failed=0
# memcheck NAME COMMAND...: runs COMMAND under valgrind; the program must succeed too.
memcheck() {
  local name=$1; shift
  local status=0 start=$SECONDS
  valgrind --leak-check=full --errors-for-leak-kinds=definite,indirect --error-exitcode=1 \
    --log-file="$out/$name.valgrind" "$@" > "$out/$name.out" 2>&1 || status=$?
  local summary
  # No summary when valgrind itself gave up (it says why in its log, shown below): not a silent exit.
  summary=$(grep -E 'definitely lost:|indirectly lost:|possibly lost:|still reachable:|ERROR SUMMARY:' "$out/$name.valgrind" |
            sed -E 's/^==[0-9]+== +//' | tr -s ' ' | paste -sd';' -) || summary="no summary: valgrind stopped"
  echo "memcheck $name ($((SECONDS - start)) s): $summary"
  if [ "$status" -ne 0 ] || ! grep -q 'ERROR SUMMARY: 0 errors' "$out/$name.valgrind"; then
    echo "--- $name: exit $status; output:" >&2; tail -n 5 "$out/$name.out" >&2
    echo "--- valgrind:" >&2; grep -vE '### unhandled dwarf|get_Form_szB' "$out/$name.valgrind" | tail -n 60 >&2
    failed=1
  fi
}

mock_start plain "$build/swiftpush-cli" "$pki" --goaway-after 700
memcheck send_one "$out/send_one" "$pki/AuthKey_TESTKEY001.p8" TESTKEY001 TEAM123456 com.example.app \
  00fc13adff785122b4ad28809a3420982341241421348097878e577c991de8f0 localhost "$MOCK_PORT" "$pki/ca.pem"
memcheck load-goaway "$out/load" --port "$MOCK_PORT" --ca "$pki/ca.pem" --key "$pki/AuthKey_TESTKEY001.p8" \
  --count 3000 --window 500 --connections 2 --quiet
mock_start faults "$build/swiftpush-cli" "$pki" --refuse-every 7 --status-503-every 50
memcheck load-faults "$out/load" --port "$MOCK_PORT" --ca "$pki/ca.pem" --key "$pki/AuthKey_TESTKEY001.p8" \
  --count 2000 --window 300 --quiet
grep -h '^load-result' "$out"/load-*.out | sed 's/^/  /'
if [ "$failed" -ne 0 ]; then
  echo "FAILED: valgrind memcheck" >&2
  exit 1
fi
echo "ok: valgrind memcheck: no leaks, no invalid accesses"
